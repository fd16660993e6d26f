import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { sql } from 'kysely';
import { createAccount } from '../../src/accounts/accounts.repository.ts';
import { fromUnits, toUnits } from '../../src/accounts/money.ts';
import type { DatabaseHandle } from '../../src/db/connect.ts';
import { type SettlementRow, settleLlmCalls } from '../../src/llm/llm-settlement.repository.ts';
import { type ModelCall, type ModelState, settleModel } from '../helpers/settlement-model.ts';
import { settlementRow } from '../helpers/settlement-row.ts';
import { DATABASE_MODES, useDatabase } from '../helpers/in-process-database.ts';

/**
 * The settlement statement against its reference (tests/helpers/settlement-model.ts), on random
 * batches: several accounts, calls with and without balance and key holds, costs above the
 * holds and above what is left. Every balance, lease, key, task cost, ledger entry and reported
 * shortfall must be the model's, to the unit, on Postgres and on the embedded PGlite.
 */
const units = (max: number) => fc.bigInt({ min: 0n, max: BigInt(max) });
const scenario = fc.record({
  accounts: fc.array(
    fc.record({
      free: fc.oneof(fc.constant(0n), units(2_000_000)),
      /** Reserved by another instance's lease, which this batch does not touch. */
      otherReserved: units(500_000),
      leaseSpare: fc.array(units(300_000), { maxLength: 2 }),
      keyLeaseSpare: fc.option(units(300_000), { nil: undefined }),
    }),
    { minLength: 1, maxLength: 3 },
  ),
  calls: fc.array(
    fc.record({
      account: fc.nat(),
      cost: units(900_000),
      hold: fc.option(fc.record({ lease: fc.nat(), units: units(400_000) }), { nil: undefined }),
      keyed: fc.boolean(),
      keyHold: fc.option(units(400_000), { nil: undefined }),
    }),
    { minLength: 1, maxLength: 8 },
  ),
});
type Scenario = typeof scenario extends fc.Arbitrary<infer T> ? T : never;

let emails = 0;
/** Writes the scenario's accounts, keys and leases; returns the calls and the state the model starts from. */
async function arrange(db: DatabaseHandle['db'], s: Scenario): Promise<{ calls: ModelCall[]; before: ModelState }> {
  const before: ModelState = { accounts: new Map(), leases: new Map(), keys: new Map(), keyLeases: new Map() };
  const owners: Array<{ id: number; key: number; leases: string[]; keyLease?: string }> = [];
  for (const a of s.accounts) {
    const { account } = await createAccount(db, { email: `model-${emails++}-${Date.now()}@example.com`, balance: 0n });
    const key = await db
      .selectFrom('api_keys')
      .select('id')
      .where('account_id', '=', account.id)
      .executeTakeFirstOrThrow();
    owners.push({
      id: account.id,
      key: key.id,
      leases: a.leaseSpare.map(() => crypto.randomUUID()),
      ...(a.keyLeaseSpare !== undefined ? { keyLease: crypto.randomUUID() } : {}),
    });
  }
  const calls: ModelCall[] = s.calls.map((c) => {
    const owner = owners[c.account % owners.length]!;
    const lease = c.hold && owner.leases.length ? owner.leases[c.hold.lease % owner.leases.length] : undefined;
    return {
      account: owner.id,
      cost: c.cost,
      ...(lease && c.hold ? { hold: { lease, units: c.hold.units } } : {}),
      ...(c.keyed ? { key: owner.key } : {}),
      ...(c.keyed && owner.keyLease && c.keyHold !== undefined
        ? { keyHold: { lease: owner.keyLease, units: c.keyHold } }
        : {}),
    };
  });
  // Each lease holds at least its calls' holds (the instance grants holds out of it) and some spare.
  const held = (lease: string, of: (c: ModelCall) => { lease: string; units: bigint } | undefined) =>
    calls.reduce((sum, c) => sum + (of(c)?.lease === lease ? of(c)!.units : 0n), 0n);
  for (const [i, a] of s.accounts.entries()) {
    const { id, key, leases, keyLease } = owners[i]!;
    const amounts = leases.map((lease, j) => held(lease, (c) => c.hold) + a.leaseSpare[j]!);
    for (const [j, lease] of leases.entries()) before.leases.set(lease, amounts[j]!);
    const reserved = amounts.reduce((x, y) => x + y, 0n) + a.otherReserved;
    const rows = [
      ...leases.map((lease, j) => [lease, amounts[j]!] as const),
      [crypto.randomUUID(), a.otherReserved] as const,
    ];
    for (const [lease, amount] of rows)
      await sql`insert into llm_reservations (id, account_id, amount_usd, expires_at) values (${lease}, ${id}, ${fromUnits(amount)}, now() + interval '1 hour')`.execute(
        db,
      );
    const balance = reserved + a.free;
    await sql`update accounts set balance_usd = ${fromUnits(balance)}, reserved_usd = ${fromUnits(reserved)} where id = ${id}`.execute(
      db,
    );
    before.accounts.set(id, { balance, reserved });
    const keyReserved = keyLease ? held(keyLease, (c) => c.keyHold) + (a.keyLeaseSpare ?? 0n) : 0n;
    if (keyLease) {
      before.keyLeases.set(keyLease, keyReserved);
      await sql`insert into key_holds (id, key_id, amount_usd, expires_at) values (${keyLease}, ${key}, ${fromUnits(keyReserved)}, now() + interval '1 hour')`.execute(
        db,
      );
    }
    await sql`update api_keys set reserved_usd = ${fromUnits(keyReserved)} where id = ${key}`.execute(db);
    before.keys.set(key, { spend: 0n, reserved: keyReserved });
  }
  return { calls, before };
}

/** The same state read back from the database, for the accounts, leases and keys of `before`. */
async function observe(db: DatabaseHandle['db'], before: ModelState): Promise<ModelState> {
  const ids = <K>(m: Map<K, unknown>) => [...m.keys()];
  const accounts = await db
    .selectFrom('accounts')
    .select(['id', 'balance_usd', 'reserved_usd'])
    .where('id', 'in', ids(before.accounts))
    .execute();
  const keys = await db
    .selectFrom('api_keys')
    .select(['id', 'spend_usd', 'reserved_usd'])
    .where('id', 'in', ids(before.keys))
    .execute();
  const leases = before.leases.size
    ? await db
        .selectFrom('llm_reservations')
        .select(['id', 'amount_usd'])
        .where('id', 'in', ids(before.leases))
        .execute()
    : [];
  const keyLeases = before.keyLeases.size
    ? await db.selectFrom('key_holds').select(['id', 'amount_usd']).where('id', 'in', ids(before.keyLeases)).execute()
    : [];
  return {
    accounts: new Map(
      accounts.map((a) => [a.id, { balance: toUnits(a.balance_usd), reserved: toUnits(a.reserved_usd) }]),
    ),
    leases: new Map(leases.map((l) => [l.id, toUnits(l.amount_usd)])),
    keys: new Map(keys.map((k) => [k.id, { spend: toUnits(k.spend_usd), reserved: toUnits(k.reserved_usd) }])),
    keyLeases: new Map(keyLeases.map((l) => [l.id, toUnits(l.amount_usd)])),
  };
}

function rowsOf(calls: ModelCall[], taskIds: string[]): SettlementRow[] {
  return calls.map((c, ord) =>
    settlementRow({
      ord,
      id: taskIds[ord]!,
      account_id: c.account,
      cost: fromUnits(c.cost),
      hold_id: c.hold?.lease ?? null,
      hold_units: c.hold ? fromUnits(c.hold.units) : null,
      key_id: c.key ?? null,
      key_hold_id: c.keyHold?.lease ?? null,
      key_hold_units: c.keyHold ? fromUnits(c.keyHold.units) : null,
    }),
  );
}

for (const mode of DATABASE_MODES)
  describe(`settlement statement (${mode})`, () => {
    const database = useDatabase(mode, 'settlemodel');

    test('charges, caps, leases, keys, ledger and shortfalls match the reference model on random batches', async () => {
      await fc.assert(
        fc.asyncProperty(scenario, async (s) => {
          const { db, prepared } = database();
          const { calls, before } = await arrange(db, s);
          const taskIds = calls.map(() => crypto.randomUUID());
          const settled = await settleLlmCalls(db, prepared, rowsOf(calls, taskIds));
          const want = settleModel(before, calls);

          expect(await observe(db, before)).toEqual(want.after);
          const tasks = await db.selectFrom('tasks').select(['id', 'cost_usd']).where('id', 'in', taskIds).execute();
          const ledger = await db
            .selectFrom('ledger_entries')
            .select(['task_id', 'amount_usd', 'balance_after_usd'])
            .where('task_id', 'in', taskIds)
            .execute();
          const byTask = <T extends { id?: string; task_id?: string | null }>(xs: T[]) =>
            new Map(xs.map((x) => [x.id ?? x.task_id ?? '', x]));
          const taskRows = byTask(tasks);
          const entries = byTask(ledger);
          taskIds.forEach((id, i) => {
            const { charge, balanceAfter } = want.charges[i]!;
            expect(toUnits(taskRows.get(id)!.cost_usd)).toBe(charge);
            const entry = entries.get(id);
            // A call charged nothing has no ledger entry.
            expect(entry && [toUnits(entry.amount_usd), toUnits(entry.balance_after_usd)]).toEqual(
              charge > 0n ? [-charge, balanceAfter] : undefined,
            );
          });
          expect(new Set(settled.accounts)).toEqual(new Set(want.charged));
          expect(settled.shortfalls).toEqual(want.shortfalls);
          expect(settled.taken).toEqual(want.taken);
          expect(settled.keyTaken).toEqual(want.keyTaken);

          // Retried whole (after a commit the gateway did not hear of), the batch moves nothing.
          const again = await settleLlmCalls(db, prepared, rowsOf(calls, taskIds));
          expect(again).toEqual({ accounts: [], shortfalls: new Map(), taken: new Map(), keyTaken: new Map() });
          expect(await observe(db, before)).toEqual(want.after);
        }),
        { numRuns: 100 },
      );
    }, 120_000);
  });
