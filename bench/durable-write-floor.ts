/**
 * The floor any durable write sets on this machine's disk: an append of one call's record
 * (`--bytes`, default 300) followed by `fdatasync`, the least a process can do to know a record
 * survives a crash, `--count` times one after another. Prints p50/p90/p99 in ms (figures, not a test).
 *
 *   bun run bench/durable-write-floor.ts [--count 2000] [--bytes 300] [--dir ./data]
 *
 * Why it matters (bench/README.md): docs/money.md commits a call's charge before its last byte,
 * so one call alone can never be answered faster than one such flush, whatever writes it:
 * Postgres's commit, a local journal, anything else.
 */
import { closeSync, fdatasyncSync, mkdirSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { percentile } from './lib/h2load.ts';
import { stringArg } from './lib/cli-args.ts';

const COUNT = Number(stringArg('--count', '2000')) || 2000;
const BYTES = Number(stringArg('--bytes', '300')) || 300;
const DIR = stringArg('--dir', './data');

mkdirSync(DIR, { recursive: true });
const path = join(DIR, `durable-write-floor-${process.pid}.bin`);
const fd = openSync(path, 'a');
const record = Buffer.alloc(BYTES, 0x78);
const times: number[] = [];
try {
  for (let i = 0; i < COUNT; i++) {
    const t0 = performance.now();
    writeSync(fd, record);
    fdatasyncSync(fd);
    times.push(performance.now() - t0);
  }
} finally {
  closeSync(fd);
  rmSync(path, { force: true });
}
times.sort((a, b) => a - b);
const ms = (p: number) => percentile(times, p).toFixed(3);
console.log(`| write | count | p50 ms | p90 ms | p99 ms |`);
console.log(`| --- | --- | --- | --- | --- |`);
console.log(`| ${BYTES}-byte append + fdatasync in ${DIR} | ${COUNT} | ${ms(50)} | ${ms(90)} | ${ms(99)} |`);
