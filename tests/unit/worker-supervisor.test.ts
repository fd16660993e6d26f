import { describe, expect, test } from 'bun:test';
import { relayLines } from '../../src/cluster/line-relay.ts';
import { WorkerSupervisor } from '../../src/cluster/worker-supervisor.ts';
import { Logger } from '../../src/ops/logger.ts';

const enc = new TextEncoder();
const streamOf = (parts: string[]) =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      for (const p of parts) controller.enqueue(enc.encode(p));
      controller.close();
    },
  });

describe('relayLines', () => {
  test('writes whole lines only, however the bytes were cut, and the unfinished tail at the end', async () => {
    const writes: string[] = [];
    const dec = new TextDecoder();
    await relayLines(streamOf(['{"a":', '1}\n{"b"', ':2}\n{"c":3}\n{"d"', ':4}\nhalf']), (b) =>
      writes.push(dec.decode(b)),
    );
    expect(writes).toEqual(['{"a":1}\n', '{"b":2}\n{"c":3}\n', '{"d":4}\n', 'half']);
  });
});

/** Collects the supervisor's log lines. */
function capture(): { log: Logger; lines: () => Array<Record<string, unknown>> } {
  const out: string[] = [];
  const log = new Logger('info', (text) => out.push(text));
  return {
    log,
    lines: () => {
      log.flush();
      return out
        .join('')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    },
  };
}

describe('WorkerSupervisor', () => {
  test('a worker that keeps crashing is restarted with a doubling backoff, each exit logged', async () => {
    const { log, lines } = capture();
    const supervisor = new WorkerSupervisor({
      count: 1,
      log,
      command: [process.execPath, '-e', 'process.exit(3)'],
      backoffMs: 50,
      maxBackoffMs: 200,
    });
    supervisor.start(0);
    const deadline = Date.now() + 10_000;
    while (lines().filter((l) => l.msg === 'worker exited; restarting').length < 4 && Date.now() < deadline)
      await Bun.sleep(20);
    expect(await supervisor.stop('SIGTERM')).toBe(true);
    const exits = lines().filter((l) => l.msg === 'worker exited; restarting');
    expect(exits.slice(0, 4).map((l) => l.restart_in_ms)).toEqual([50, 100, 200, 200]);
    expect(exits[0]).toMatchObject({ worker_slot: 1, exit_code: 3, signal: null });
    // After stop, nothing is restarted any more.
    const started = lines().filter((l) => l.msg === 'worker started').length;
    await Bun.sleep(300);
    expect(lines().filter((l) => l.msg === 'worker started').length).toBe(started);
  });

  test('a worker that cannot even be spawned is tried again with the same backoff', async () => {
    const { log, lines } = capture();
    const supervisor = new WorkerSupervisor({
      count: 1,
      log,
      command: ['/nonexistent/gateway-binary'],
      backoffMs: 40,
      maxBackoffMs: 80,
    });
    supervisor.start(0);
    const deadline = Date.now() + 10_000;
    while (lines().filter((l) => l.msg === 'worker could not be started').length < 3 && Date.now() < deadline)
      await Bun.sleep(20);
    expect(await supervisor.stop('SIGTERM')).toBe(true);
    const failures = lines().filter((l) => l.msg === 'worker could not be started');
    expect(failures.slice(0, 3).map((l) => l.restart_in_ms)).toEqual([40, 80, 80]);
    expect(supervisor.runningSlots()).toEqual([]);
  });

  test('stop forwards the signal and reports whether every worker exited 0', async () => {
    const script = (code: number) =>
      `process.on('SIGTERM', () => process.exit(${code})); process.send?.('up'); setInterval(() => {}, 1000);`;
    for (const [code, clean] of [
      [0, true],
      [1, false],
    ] as const) {
      const { log } = capture();
      const supervisor = new WorkerSupervisor({ count: 2, log, command: [process.execPath, '-e', script(code)] });
      let up = 0;
      supervisor.onMessage(() => {
        up++;
      });
      supervisor.start(0);
      const deadline = Date.now() + 10_000;
      while (up < 2 && Date.now() < deadline) await Bun.sleep(20);
      expect(supervisor.runningSlots()).toEqual([1, 2]);
      expect(await supervisor.stop('SIGTERM')).toBe(clean);
      expect(supervisor.runningSlots()).toEqual([]);
    }
  });

  test('a worker that outlives the grace period is killed and counts as a failed stop', async () => {
    const { log, lines } = capture();
    const supervisor = new WorkerSupervisor({
      count: 1,
      log,
      command: [
        process.execPath,
        '-e',
        `process.on('SIGTERM', () => {}); process.send?.('up'); setInterval(() => {}, 1000);`,
      ],
      stopGraceMs: 300,
    });
    let up = false;
    supervisor.onMessage(() => {
      up = true;
    });
    supervisor.start(0);
    const deadline = Date.now() + 10_000;
    while (!up && Date.now() < deadline) await Bun.sleep(20);
    expect(await supervisor.stop('SIGTERM')).toBe(false);
    expect(lines().some((l) => l.msg === 'worker did not stop in time; killing it')).toBe(true);
  });
});
