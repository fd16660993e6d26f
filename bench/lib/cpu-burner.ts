/**
 * Burns a given share of one core for a while and nothing else, as its own process:
 *
 *   bun run bench/lib/cpu-burner.ts <share 0–1> <seconds>
 *
 * A control for bench/hostile-under-load.ts: the hostile sender shares the load core with h2load,
 * the fake upstream and (unpinned) Postgres, so part of what its traffic does to other accounts'
 * latency is its own CPU there, which a gateway cannot help. This burns that much CPU on the same
 * core (its parent's affinity) without sending anything, in 10 ms periods: busy for `share` of
 * each, asleep for the rest.
 */
export {};

const [shareArg, secondsArg] = process.argv.slice(2);
const SHARE = Math.min(1, Math.max(0, Number(shareArg)));
const SECONDS = Number(secondsArg);
if (!Number.isFinite(SHARE) || !(SECONDS > 0)) throw new Error('usage: cpu-burner.ts <share 0–1> <seconds>');

const PERIOD_MS = 10;
const end = performance.now() + SECONDS * 1000;
let sink = 0;
while (performance.now() < end) {
  const busyUntil = performance.now() + PERIOD_MS * SHARE;
  while (performance.now() < busyUntil) sink = (sink + Math.sqrt(sink + 1)) % 1e9;
  await Bun.sleep(PERIOD_MS * (1 - SHARE));
}
// Printed so the loop's result is used (and the work not optimised away).
console.log(JSON.stringify({ share: SHARE, seconds: SECONDS, sink: Math.round(sink) }));
