import { afterAll, beforeAll, expect, test } from 'bun:test';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { connectDatabase, type DatabaseHandle } from '../../src/db/connect.ts';
import { seedDataDir, TEMPLATE_DIR } from '../../src/db/pglite-template.ts';

/**
 * The embedded database as docs/operations.md describes it: a new data dir is a copy of the
 * template cluster, an existing one is left as it is; PGlite runs in a worker thread and its
 * prepared statements, errors and transactions behave as on Postgres.
 */
let dataDir: string;
let database: DatabaseHandle;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'gw-embedded-db-'));
  database = await connectDatabase({ dataDir });
  await database.db.executeQuery(
    sql`create table t (id int primary key, n numeric not null, big int8, doc jsonb, at timestamptz, tags text[])`.compile(
      database.db,
    ),
  );
});
afterAll(async () => {
  await database.close();
  await rm(dataDir, { recursive: true, force: true });
});

const upsert = (id: unknown) =>
  sql<{ id: number; n: string; big: number; doc: unknown; at: Date; tags: string[] }>`
    insert into t values (${id}, 1.5, 9007199254740991, ${JSON.stringify({ a: [1, 'x'] })}::jsonb, ${new Date(0)}, ${['a', 'b']})
    on conflict (id) do update set n = t.n + 1 returning *`.compile(database.db);

test('a new data dir is a copy of the template cluster', async () => {
  expect(existsSync(join(TEMPLATE_DIR, 'PG_VERSION'))).toBe(true);
  expect(existsSync(join(dataDir, 'pg', 'PG_VERSION'))).toBe(true);
  // No staging directory is left behind.
  expect((await readdir(dataDir)).filter((name) => name.startsWith('pg.new-'))).toEqual([]);
});

test('an existing cluster is left as it is, and a non-empty directory that is not one is not touched', async () => {
  expect(await seedDataDir(join(dataDir, 'pg'))).toBe('existing');
  const other = await mkdtemp(join(tmpdir(), 'gw-embedded-other-'));
  try {
    await writeFile(join(other, 'note.txt'), 'mine');
    expect(await seedDataDir(other)).toBe('left');
    expect(await readdir(other)).toEqual(['note.txt']);
  } finally {
    await rm(other, { recursive: true, force: true });
  }
});

test('prepared statements: values round-trip as on Postgres, and run again with new parameters', async () => {
  const [first] = await database.prepared<{
    id: number;
    n: string;
    big: number;
    doc: unknown;
    at: Date;
    tags: string[];
  }>('upsert_t', upsert(1));
  expect(first).toEqual({
    id: 1,
    n: '1.5',
    big: 9007199254740991,
    doc: { a: [1, 'x'] },
    at: new Date(0),
    tags: ['a', 'b'],
  });
  const [again] = await database.prepared<{ n: string }>('upsert_t', upsert(1));
  expect(again?.n).toBe('2.5');
});

test('a failing statement rejects with its SQLSTATE and leaves the session usable', async () => {
  const err = await database.prepared('upsert_t', upsert('not a number')).catch((e: unknown) => e);
  expect((err as { code?: string }).code).toBe('22P02');
  const viaKysely = await database.db
    .executeQuery(sql`select 1 / ${0}::int`.compile(database.db))
    .catch((e: unknown) => e);
  expect((viaKysely as { code?: string }).code).toBe('22012');
  const [row] = await database.prepared<{ id: number }>('upsert_t', upsert(2));
  expect(row?.id).toBe(2);
});

test('a prepared statement waits for another caller’s open transaction instead of joining it', async () => {
  let inside!: () => void;
  const entered = new Promise<void>((resolve) => (inside = resolve));
  const transaction = database.db
    .transaction()
    .execute(async (trx) => {
      await trx.executeQuery(sql`update t set n = 100 where id = 1`.compile(trx));
      inside();
      await Bun.sleep(100);
      throw new Error('roll back');
    })
    .catch((e: Error) => e.message);
  await entered;
  const [read] = await database.prepared<{ n: string }>(
    'read_t',
    sql`select n from t where id = ${1}`.compile(database.db),
  );
  expect(await transaction).toBe('roll back');
  // Had it run inside the transaction it would have seen 100, and the rollback would not matter.
  expect(read?.n).toBe('2.5');
});
