import { describe, expect, test } from 'bun:test';
import { sql } from 'kysely';
import { createAccount } from '../../src/accounts/accounts.repository.ts';
import { toUnits } from '../../src/accounts/money.ts';
import type { KeyCache } from '../../src/auth/key-cache.ts';
import { KeyService, MAX_KEYS_PER_ACCOUNT } from '../../src/keys/key-service.ts';
import { rejection } from '../helpers/rejection.ts';
import { DATABASE_MODES, useDatabase } from '../helpers/in-process-database.ts';

/**
 * An account has at most MAX_KEYS_PER_ACCOUNT active keys (src/keys/key-service.ts): every key
 * is cached with its model list on every instance that sees it, and listed whole by
 * GET /v1/keys. Revoked keys do not count.
 */
for (const mode of DATABASE_MODES)
  describe(`keys per account (${mode})`, () => {
    const database = useDatabase(mode, 'keycount');

    test('the key past the bound is refused (409); revoking one makes room; another account is not held', async () => {
      const { db } = database();
      const keys = new KeyService(db, {} as KeyCache);
      const { account } = await createAccount(db, { email: `keys-${Date.now()}@example.com`, balance: toUnits(1) });
      const { account: other } = await createAccount(db, {
        email: `other-${Date.now()}@example.com`,
        balance: toUnits(1),
      });
      // The account's own first key counts: fill up to the bound by SQL, quickly.
      await sql`insert into api_keys (account_id, key_hash, key_prefix, name)
        select ${account.id}, 'h' || g || '-' || ${account.id}, 'gw_x', 'bulk'
        from generate_series(1, ${MAX_KEYS_PER_ACCOUNT} - (select count(*) from api_keys where account_id = ${account.id} and revoked_at is null)) g`.execute(
        db,
      );
      expect(await rejection(keys.create(account.id, { name: 'one too many' }))).toMatchObject({
        status: 409,
        message: `an account has at most ${MAX_KEYS_PER_ACCOUNT} active API keys; revoke one first`,
      });
      expect((await keys.create(other.id, { name: 'elsewhere' })).name).toBe('elsewhere');
      await sql`update api_keys set revoked_at = now() where id = (select max(id) from api_keys where account_id = ${account.id})`.execute(
        db,
      );
      expect((await keys.create(account.id, { name: 'room again' })).name).toBe('room again');
    });

    test('creates at once count each other: the bound holds', async () => {
      const { db } = database();
      const keys = new KeyService(db, {} as KeyCache);
      const { account } = await createAccount(db, { email: `race-${Date.now()}@example.com`, balance: toUnits(1) });
      await sql`insert into api_keys (account_id, key_hash, key_prefix, name)
        select ${account.id}, 'r' || g || '-' || ${account.id}, 'gw_x', 'bulk'
        from generate_series(1, ${MAX_KEYS_PER_ACCOUNT - 2} - (select count(*) from api_keys where account_id = ${account.id} and revoked_at is null)) g`.execute(
        db,
      );
      const outcomes = await Promise.allSettled(
        Array.from({ length: 6 }, (_, i) => keys.create(account.id, { name: `racer ${i}` })),
      );
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(2);
      const { rows } = await sql<{ n: string }>`select count(*) as n from api_keys
        where account_id = ${account.id} and revoked_at is null`.execute(db);
      expect(Number(rows[0]?.n)).toBe(MAX_KEYS_PER_ACCOUNT);
    });
  });
