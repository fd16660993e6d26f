import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { createAccount } from '../../src/accounts/accounts.repository.ts';
import { toUnits } from '../../src/accounts/money.ts';
import { connectDatabase, type DatabaseHandle } from '../../src/db/connect.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { settleLlmCalls } from '../../src/llm/llm-settlement.repository.ts';
import { prose } from '../helpers/prose.ts';
import { settlementRow } from '../helpers/settlement-row.ts';
import { createTestDatabase, dropTestDatabases } from '../helpers/services.ts';

/**
 * Migration 0010: a call's recorded conversation is compressed with lz4 where the server has it
 * (the test Postgres, Debian's), with pglz on the embedded PGlite, which has no lz4 — and the
 * migration runs on both.
 */
const modes = [
  { name: 'postgres', open: async () => ({ databaseUrl: await createTestDatabase('payloadlz4'), dataDir: tmpdir() }) },
  { name: 'embedded', open: async () => ({ dataDir: await mkdtemp(join(tmpdir(), 'payload-lz4-')) }) },
] as const;

for (const mode of modes)
  describe(`recorded calls' compression (${mode.name})`, () => {
    let database: DatabaseHandle;
    let where: { databaseUrl?: string; dataDir: string };
    beforeAll(async () => {
      where = await mode.open();
      database = await connectDatabase(where);
      await migrateToLatest(database.db);
    }, 60_000);
    afterAll(async () => {
      await database.close();
      if (where.databaseUrl) await dropTestDatabases([where.databaseUrl]);
      else await rm(where.dataDir, { recursive: true, force: true });
    });

    test(`a long conversation is stored ${mode.name === 'postgres' ? 'with lz4' : 'with pglz, the only method there'}`, async () => {
      const { account } = await createAccount(database.db, {
        email: `lz4-${Date.now()}@example.com`,
        balance: toUnits(1),
      });
      const messages = Array.from({ length: 20 }, (_, i) => ({
        role: i % 2 ? 'assistant' : 'user',
        content: prose(3000, i * 977),
      }));
      const id = crypto.randomUUID();
      await settleLlmCalls(database.db, database.prepared, [
        settlementRow({
          id,
          account_id: account.id,
          input: { model: 'sandbox/echo', messages },
          output: { text: prose(3000) },
        }),
      ]);
      const { rows } = await sql<{ input: string | null; output: string | null; same: boolean }>`
        select pg_column_compression(input) as input, pg_column_compression(output) as output,
               input = ${JSON.stringify({ model: 'sandbox/echo', messages })}::jsonb as same
        from tasks where id = ${id}`.execute(database.db);
      if (mode.name === 'postgres') expect(rows[0]).toEqual({ input: 'lz4', output: 'lz4', same: true });
      else {
        // pglz gives up on text it cannot shrink early enough (the output here), storing it as it is.
        expect(rows[0]).toEqual({ input: 'pglz', output: rows[0]?.output === null ? null : 'pglz', same: true });
      }
    });
  });
