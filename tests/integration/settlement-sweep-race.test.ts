import { describe, expect, test } from 'bun:test';
import { type KyselyPlugin, sql } from 'kysely';
import { createAccount } from '../../src/accounts/accounts.repository.ts';
import { releaseHolds } from '../../src/accounts/llm-reservations.repository.ts';
import { releaseKeyHolds } from '../../src/keys/key-holds.repository.ts';
import { settleLlmCalls } from '../../src/llm/llm-settlement.repository.ts';
import type { Db } from '../../src/db/database.ts';
import { useDatabase } from '../helpers/in-process-database.ts';
import { settlementRow } from '../helpers/settlement-row.ts';

/**
 * The settlement statement against a sweep of expired leases that commits while the statement
 * waits for an account lock (src/llm/llm-settlement.repository.ts, src/keys/key-settlement.repository.ts).
 * The statement read the leases from its snapshot: a lease the sweep had deleted (its amount
 * already taken off reserved_usd) was taken off again, so reserved_usd fell below the leases
 * that remained (the account could overspend by it, and returning the last lease failed the
 * reserved_not_negative check for good). Postgres only: the embedded PGlite runs one statement
 * at a time, so nothing can commit while another waits.
 */
describe('settlement while a sweep commits (postgres)', () => {
  const database = useDatabase('postgres', 'sweeprace');

  /** An account with $10, leases (id, amount, expired?) counted in reserved_usd, and its default key's leases likewise. */
  async function accountWith(
    db: Db,
    leases: Array<[string, number, boolean]>,
    keyLeases: Array<[string, number, boolean]>,
  ) {
    const { account } = await createAccount(db, { email: `sweep-${crypto.randomUUID()}@example.com`, balance: 0n });
    const key = await db
      .selectFrom('api_keys')
      .select('id')
      .where('account_id', '=', account.id)
      .executeTakeFirstOrThrow();
    const when = (expired: boolean) => sql`now() + ${expired ? '-1 minute' : '1 hour'}::interval`;
    for (const [id, amount, expired] of leases)
      await sql`insert into llm_reservations (id, account_id, amount_usd, expires_at) values (${id}, ${account.id}, ${amount}, ${when(expired)})`.execute(
        db,
      );
    for (const [id, amount, expired] of keyLeases)
      await sql`insert into key_holds (id, key_id, amount_usd, expires_at) values (${id}, ${key.id}, ${amount}, ${when(expired)})`.execute(
        db,
      );
    const sum = (l: Array<[string, number, boolean]>) => l.reduce((n, [, a]) => n + a, 0);
    await sql`update accounts set balance_usd = 10, reserved_usd = ${sum(leases)} where id = ${account.id}`.execute(db);
    await sql`update api_keys set budget_usd = 5, reserved_usd = ${sum(keyLeases)} where id = ${key.id}`.execute(db);
    return { accountId: account.id, keyId: key.id };
  }

  async function reservedAndLeases(db: Db, accountId: number, keyId: number) {
    const { rows } = await sql<Record<string, string>>`select a.balance_usd, a.reserved_usd,
        (select coalesce(sum(amount_usd), 0) from llm_reservations where account_id = a.id) as leases,
        k.reserved_usd as key_reserved, (select coalesce(sum(amount_usd), 0) from key_holds where key_id = k.id) as key_leases
      from accounts as a join api_keys as k on k.id = ${keyId} where a.id = ${accountId}`.execute(db);
    return Object.fromEntries(Object.entries(rows[0] ?? {}).map(([k, v]) => [k, Number(v)]));
  }

  /** Resolves once a settlement statement waits on a lock. */
  async function settlementWaits(db: Db): Promise<void> {
    for (let i = 0; i < 300; i++) {
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
        where wait_event_type = 'Lock' and query like '%jsonb_to_recordset%'`.execute(db);
      if ((rows[0]?.n ?? 0) > 0) return;
      await Bun.sleep(10);
    }
    throw new Error('the settlement never waited on a lock');
  }

  test('an account lease swept meanwhile is not taken again: reserved_usd stays the sum of the leases', async () => {
    const { db, prepared } = database();
    const dead = `dead-${crypto.randomUUID()}`;
    const { accountId, keyId } = await accountWith(
      db,
      [
        [dead, 1, true],
        [`live-${crypto.randomUUID()}`, 2, false],
      ],
      [],
    );
    // The sweep locks the account, then waits here until the settlement waits on that lock.
    let resume: () => void = () => {};
    let queries = 0;
    const pause: KyselyPlugin = {
      transformQuery: (args) => args.node,
      async transformResult(args) {
        if (++queries === 2) await new Promise<void>((r) => (resume = r));
        return args.result;
      },
    };
    const sweep = db
      .withPlugin(pause)
      .transaction()
      .execute((trx) => releaseHolds(trx, { expired: true }));
    for (let i = 0; i < 200 && queries < 2; i++) await Bun.sleep(10);
    const settling = settleLlmCalls(db, prepared, [
      settlementRow({ id: crypto.randomUUID(), account_id: accountId, cost: '0.3', hold_id: dead, hold_units: '0.4' }),
    ]);
    await settlementWaits(db);
    resume();
    await sweep;
    const settled = await settling;
    expect(settled.taken.size).toBe(0);
    // Before: reserved 1.7 against 2.0 of leases.
    expect(await reservedAndLeases(db, accountId, keyId)).toMatchObject({
      balance_usd: 9.7,
      reserved_usd: 2,
      leases: 2,
    });
    // And the remaining lease can be returned (it failed the reserved_not_negative check before).
    await db.transaction().execute((trx) => releaseHolds(trx, { expired: true }));
    await sql`update llm_reservations set expires_at = now() - interval '1 minute' where account_id = ${accountId}`.execute(
      db,
    );
    await db.transaction().execute((trx) => releaseHolds(trx, { expired: true }));
    expect(await reservedAndLeases(db, accountId, keyId)).toMatchObject({ reserved_usd: 0, leases: 0 });
  });

  test('a key lease swept meanwhile gives nothing: the key’s reserved_usd stays the sum of its leases', async () => {
    const { db, prepared } = database();
    const dead = `kdead-${crypto.randomUUID()}`;
    const { accountId, keyId } = await accountWith(
      db,
      [],
      [
        [dead, 1, true],
        [`klive-${crypto.randomUUID()}`, 2, false],
      ],
    );
    // Any writer of the account (a lease growth, another settlement) holds its row a moment.
    await db.connection().execute(async (conn) => {
      await sql`begin`.execute(conn);
      await sql`select id from accounts where id = ${accountId} for no key update`.execute(conn);
      const settling = settleLlmCalls(db, prepared, [
        settlementRow({
          id: crypto.randomUUID(),
          account_id: accountId,
          cost: '0.3',
          key_id: keyId,
          key_hold_id: dead,
          key_hold_units: '0.4',
        }),
      ]);
      await settlementWaits(db);
      await releaseKeyHolds(db, { expired: true });
      await sql`commit`.execute(conn);
      const settled = await settling;
      expect(settled.keyTaken.size).toBe(0);
    });
    // Before: the key's reserved 1.7 against 2.0 of leases, so its budget could be passed by 0.3.
    expect(await reservedAndLeases(db, accountId, keyId)).toMatchObject({ key_reserved: 2, key_leases: 2 });
  });
});
