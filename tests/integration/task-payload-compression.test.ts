import { describe, expect, test } from 'bun:test';
import { sql } from 'kysely';
import { createAccount } from '../../src/accounts/accounts.repository.ts';
import { toUnits } from '../../src/accounts/money.ts';
import { settleLlmCalls } from '../../src/llm/llm-settlement.repository.ts';
import { conversation, prose } from '../helpers/prose.ts';
import { settlementRow } from '../helpers/settlement-row.ts';
import { DATABASE_MODES, useDatabase } from '../helpers/in-process-database.ts';

/**
 * Migration 0010: a call's recorded conversation is compressed with lz4 where the server has it
 * (the test Postgres, Debian's), with pglz on the embedded PGlite, which has no lz4 — and the
 * migration runs on both.
 */

for (const mode of DATABASE_MODES)
  describe(`recorded calls' compression (${mode})`, () => {
    const database = useDatabase(mode, 'payloadlz4');

    test(`a long conversation is stored ${mode === 'postgres' ? 'with lz4' : 'with pglz, the only method there'}`, async () => {
      const { db, prepared } = database();
      const { account } = await createAccount(db, {
        email: `lz4-${Date.now()}@example.com`,
        balance: toUnits(1),
      });
      const messages = conversation(20, 3000);
      const id = crypto.randomUUID();
      await settleLlmCalls(db, prepared, [
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
        from tasks where id = ${id}`.execute(db);
      if (mode === 'postgres') expect(rows[0]).toEqual({ input: 'lz4', output: 'lz4', same: true });
      else {
        // pglz gives up on text it cannot shrink early enough (the output here), storing it as it is.
        expect(rows[0]).toEqual({ input: 'pglz', output: rows[0]?.output === null ? null : 'pglz', same: true });
      }
    });
  });
