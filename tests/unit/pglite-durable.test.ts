import { afterAll, describe, expect, test } from 'bun:test';
import { fdatasyncSync, fstatSync, mkdtempSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { DURABLE_START_PARAMS, DurableNodeFS } from '../../src/db/pglite-durable.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** The host path a descriptor is open on. */
const pathOf = (fd: number) => readlinkSync(`/proc/self/fd/${fd}`);

describe('the embedded database syncs to disk (src/db/pglite-durable.ts)', () => {
  test('every commit syncs the WAL, a checkpoint syncs data files and directories, all under the data dir', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pglite-durable-'));
    dirs.push(dir);
    const synced: string[] = [];
    const sync = (fd: number) => {
      synced.push(`${fstatSync(fd).isDirectory() ? 'dir ' : ''}${pathOf(fd)}`);
      fdatasyncSync(fd);
    };
    const pg = new PGlite({ fs: new DurableNodeFS(dir, sync), startParams: DURABLE_START_PARAMS });
    await pg.waitReady;
    // A new cluster's start-up (initdb, its first checkpoint) is synced too.
    expect(synced.length).toBeGreaterThan(0);
    expect((await pg.query<{ fsync: string }>('show fsync')).rows[0]?.fsync).toBe('on');

    await pg.exec('create table t (x int)');
    synced.length = 0;
    for (let i = 0; i < 20; i++) await pg.query('insert into t values ($1)', [i]);
    // One sync per commit, each of a WAL segment.
    expect(synced.length).toBeGreaterThanOrEqual(20);
    expect(synced.every((p) => p.startsWith(join(dir, 'pg_wal/')))).toBe(true);

    // A read-only statement commits nothing to sync.
    synced.length = 0;
    await pg.query('select count(*) from t');
    expect(synced).toEqual([]);

    await pg.exec('checkpoint');
    expect(synced.some((p) => p.startsWith(join(dir, 'base/')))).toBe(true);
    expect(synced.some((p) => p.startsWith(`dir ${dir}`))).toBe(true);
    expect(synced.every((p) => p.replace(/^dir /, '').startsWith(dir))).toBe(true);
    await pg.close();

    // Reopened, the rows are there.
    const again = new PGlite({ fs: new DurableNodeFS(dir), startParams: DURABLE_START_PARAMS });
    expect((await again.query<{ n: number }>('select count(*)::int as n from t')).rows[0]?.n).toBe(20);
    await again.close();
  }, 60_000);

  test('a failed sync is an I/O error Postgres stops on, not a silent success', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pglite-durable-'));
    dirs.push(dir);
    let failing = false;
    const sync = (fd: number) => {
      if (failing) throw new Error('EIO');
      fdatasyncSync(fd);
    };
    const pg = new PGlite({ fs: new DurableNodeFS(dir, sync), startParams: DURABLE_START_PARAMS });
    await pg.waitReady;
    await pg.exec('create table t (x int)');
    failing = true;
    await expect(pg.query('insert into t values (1)')).rejects.toThrow();
  }, 60_000);
});
