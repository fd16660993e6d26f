/**
 * The floor any durable write sets on this machine's disk: one call's record (`--bytes`, default
 * 300) written and `fdatasync`ed, the least a process can do to know a record survives a crash,
 * `--count` times one after another. Alternated in `--rounds` blocks: appended to a file that
 * grows (synced on this thread, then on the thread pool as the journal syncs), and written by the
 * settlement journal's own segment (src/llm/journal-segment.ts) into space it zero-filled ahead,
 * so the sync has no size change to commit. With `--postgres URL`, also a row of the same size
 * inserted into a table of its own there and committed, back to back and then one every
 * `--lone-gap` ms (`--lone-count` of them), as lone calls come, beside the journal's segment written
 * as seldom. Prints p50/p90/p99 in ms and this process's CPU per write, all threads (Postgres's own
 * CPU is not in it; figures, not a test).
 *
 *   bun run bench/durable-write-floor.ts [--count 2000] [--bytes 300] [--rounds 2] [--dir ./data]
 *     [--postgres postgres://postgres@127.0.0.1:5432/test [--lone-gap 40] [--lone-count 250]]
 *
 * Why it matters (bench/README.md): docs/money.md commits a call's charge before its last byte,
 * so one call alone can never be answered faster than one such flush, whatever writes it:
 * Postgres's commit, a local journal, anything else.
 */
import { closeSync, fdatasync, fdatasyncSync, mkdirSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { SQL } from 'bun';
import { JournalSegment } from '../src/llm/journal-segment.ts';
import { percentile } from './lib/h2load.ts';
import { numberArg, stringArg } from './lib/cli-args.ts';

const COUNT = numberArg('--count', 2000);
const BYTES = numberArg('--bytes', 300);
const ROUNDS = numberArg('--rounds', 2);
const DIR = stringArg('--dir', './data');
const POSTGRES = stringArg('--postgres', '');
const LONE_GAP_MS = numberArg('--lone-gap', 40);
const LONE_COUNT = numberArg('--lone-count', 250);

mkdirSync(DIR, { recursive: true });
const record = Buffer.alloc(BYTES, 0x78);
record[BYTES - 1] = 10;

/**
 * Times writes made by `write` and the process's CPU over them: `COUNT` back to back or, `gapMs`
 * apart, `LONE_COUNT`.
 */
async function measure(
  write: () => void | Promise<void>,
  { gapMs = 0, count = gapMs > 0 ? LONE_COUNT : COUNT }: { gapMs?: number; count?: number } = {},
): Promise<{ times: number[]; cpuMs: number }> {
  const times: number[] = [];
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < count; i++) {
    if (gapMs > 0) await Bun.sleep(gapMs);
    const t0 = performance.now();
    await write();
    times.push(performance.now() - t0);
  }
  const cpu = process.cpuUsage(cpu0);
  return { times, cpuMs: (cpu.user + cpu.system) / 1000 / count };
}

/** Appended to a growing file, synced on this thread or, as the journal syncs, on the thread pool. */
async function appended(pool: boolean) {
  const path = join(DIR, `durable-write-floor-${process.pid}.bin`);
  const fd = openSync(path, 'a');
  try {
    return await measure(async () => {
      writeSync(fd, record);
      if (pool) await new Promise<void>((resolve, reject) => fdatasync(fd, (e) => (e ? reject(e) : resolve())));
      else fdatasyncSync(fd);
    });
  } finally {
    closeSync(fd);
    rmSync(path, { force: true });
  }
}

async function preallocated(gapMs = 0) {
  const path = join(DIR, `durable-write-floor-${process.pid}.seg`);
  const segment = JournalSegment.open(path);
  try {
    return await measure(
      async () => {
        segment.write(record);
        await segment.sync();
      },
      { gapMs },
    );
  } finally {
    segment.close();
    rmSync(path, { force: true });
  }
}

/**
 * One row of `BYTES` inserted and committed by Bun's client on one connection: what any write a
 * caller waits for costs in Postgres (a settlement's commit can cost no less). With `gapMs`, one
 * every `gapMs` as lone calls come (`LONE_COUNT` of them), whose caches and cores have gone cold.
 */
async function postgresInserts(gapMs: number) {
  const sql = new SQL({ url: POSTGRES, max: 1 });
  const table = `durable_write_floor_${process.pid}`;
  await sql.unsafe(`create table ${table} (id bigserial primary key, v text not null)`);
  const value = record.toString('latin1');
  try {
    return await measure(() => sql.unsafe(`insert into ${table} (v) values ($1)`, [value]).then(() => undefined), {
      gapMs,
    });
  } finally {
    await sql.unsafe(`drop table ${table}`);
    await sql.close();
  }
}

const results: Record<string, { times: number[]; cpu: number[] }> = {};
type Way = [name: string, run: () => Promise<{ times: number[]; cpuMs: number }>];
const ways: Way[] = [
  [`${BYTES}-byte append + fdatasync`, () => appended(false)],
  [`${BYTES}-byte append + fdatasync on the thread pool (the journal before its segments)`, () => appended(true)],
  [
    `${BYTES}-byte write into zero-filled space + fdatasync on the thread pool (the journal's segment)`,
    () => preallocated(),
  ],
  ...(POSTGRES
    ? ([
        [`the journal's segment as above, one every ${LONE_GAP_MS} ms (lone calls)`, () => preallocated(LONE_GAP_MS)],
        [`Postgres: a ${BYTES}-byte row inserted and committed, back to back`, () => postgresInserts(0)],
        [`Postgres: the same, one every ${LONE_GAP_MS} ms (lone calls)`, () => postgresInserts(LONE_GAP_MS)],
      ] satisfies Way[])
    : []),
];
for (let round = 0; round < ROUNDS; round++)
  for (const [name, run] of ways) {
    const { times, cpuMs } = await run();
    const r = (results[name] ??= { times: [], cpu: [] });
    r.times.push(...times);
    r.cpu.push(cpuMs);
  }

console.log(`| write, in ${DIR} | count | p50 ms | p90 ms | p99 ms | CPU ms per write (each round) |`);
console.log(`| --- | --- | --- | --- | --- | --- |`);
for (const [name, { times, cpu }] of Object.entries(results)) {
  times.sort((a, b) => a - b);
  const ms = (p: number) => percentile(times, p).toFixed(3);
  console.log(
    `| ${name} | ${times.length} | ${ms(50)} | ${ms(90)} | ${ms(99)} | ${cpu.map((c) => c.toFixed(3)).join(' / ')} |`,
  );
}
