/**
 * What one settlement batch must do to the money, computed in plain integers (docs/money.md,
 * "Settling LLM calls"): the reference the settlement statement is checked against
 * (tests/integration/settlement-model.test.ts). Amounts are `UsdUnits`.
 */

export interface ModelCall {
  account: number;
  cost: bigint;
  /** The balance lease the call's hold came from, and the hold's size. */
  hold?: { lease: string; units: bigint };
  key?: number;
  /** The key lease the call's budget hold came from, and the hold's size. */
  keyHold?: { lease: string; units: bigint };
}

export interface ModelState {
  accounts: Map<number, { balance: bigint; reserved: bigint }>;
  leases: Map<string, bigint>;
  keys: Map<number, { spend: bigint; reserved: bigint }>;
  keyLeases: Map<string, bigint>;
}

export interface ModelOutcome {
  after: ModelState;
  /** Per call, in batch order: what it was charged, and the account's balance after its ledger entry. */
  charges: Array<{ charge: bigint; balanceAfter: bigint }>;
  /** Accounts charged anything. */
  charged: number[];
  /** Accounts charged less than their calls cost, by how much. */
  shortfalls: Map<number, bigint>;
  /** What each balance lease and key lease gave (only those that gave something). */
  taken: Map<string, bigint>;
  keyTaken: Map<string, bigint>;
}

const min = (a: bigint, b: bigint) => (a < b ? a : b);
const max = (a: bigint, b: bigint) => (a > b ? a : b);

/** What each lease gives: the least of what it holds and what its calls want of it. */
function takes(holds: Array<{ lease: string; want: bigint }>, amounts: Map<string, bigint>): Map<string, bigint> {
  const wants = new Map<string, bigint>();
  for (const { lease, want } of holds) wants.set(lease, (wants.get(lease) ?? 0n) + want);
  return new Map([...wants].map(([lease, want]) => [lease, min(amounts.get(lease) ?? 0n, want)]));
}

export function settleModel(before: ModelState, calls: ModelCall[]): ModelOutcome {
  const leaseTakes = takes(
    calls.flatMap((c) => (c.hold ? [{ lease: c.hold.lease, want: min(c.cost, c.hold.units) }] : [])),
    before.leases,
  );
  const leaseAccount = new Map(calls.flatMap((c) => (c.hold ? [[c.hold.lease, c.account] as const] : [])));
  const fromLease = new Map<number, bigint>();
  for (const [lease, take] of leaseTakes)
    fromLease.set(leaseAccount.get(lease)!, (fromLease.get(leaseAccount.get(lease)!) ?? 0n) + take);

  // Each account's calls, in batch order, are charged up to what it can spend plus what its leases give.
  const upto = new Map<number, bigint>();
  const charges = calls.map((c) => {
    const account = before.accounts.get(c.account)!;
    const cap = (fromLease.get(c.account) ?? 0n) + max(account.balance - account.reserved, 0n);
    const clamp = (x: bigint) => max(min(x, cap), 0n);
    const previous = upto.get(c.account) ?? 0n;
    upto.set(c.account, previous + c.cost);
    const charge = clamp(previous + c.cost) - clamp(previous);
    return { charge, balanceAfter: account.balance - clamp(previous + c.cost) };
  });

  const after: ModelState = {
    accounts: new Map([...before.accounts].map(([id, a]) => [id, { ...a }])),
    leases: new Map(before.leases),
    keys: new Map([...before.keys].map(([id, k]) => [id, { ...k }])),
    keyLeases: new Map(before.keyLeases),
  };
  const costs = new Map<number, bigint>();
  const charged = new Map<number, bigint>();
  calls.forEach((c, i) => {
    costs.set(c.account, (costs.get(c.account) ?? 0n) + c.cost);
    charged.set(c.account, (charged.get(c.account) ?? 0n) + charges[i]!.charge);
    if (c.key !== undefined) after.keys.get(c.key)!.spend += charges[i]!.charge;
  });
  for (const [id, account] of after.accounts) {
    account.balance -= charged.get(id) ?? 0n;
    account.reserved -= fromLease.get(id) ?? 0n;
  }
  for (const [lease, take] of leaseTakes) after.leases.set(lease, after.leases.get(lease)! - take);

  // Key leases give out of each call's charge (not its cost), up to the call's key hold.
  const keyTakes = takes(
    calls.flatMap((c, i) =>
      c.keyHold ? [{ lease: c.keyHold.lease, want: min(charges[i]!.charge, c.keyHold.units) }] : [],
    ),
    before.keyLeases,
  );
  const keyOf = new Map(
    calls.flatMap((c) => (c.keyHold && c.key !== undefined ? [[c.keyHold.lease, c.key] as const] : [])),
  );
  for (const [lease, take] of keyTakes) {
    after.keyLeases.set(lease, after.keyLeases.get(lease)! - take);
    const key = after.keys.get(keyOf.get(lease)!)!;
    key.reserved = max(key.reserved - take, 0n);
  }

  const shortfalls = new Map<number, bigint>();
  for (const [id, cost] of costs) if (cost > charged.get(id)!) shortfalls.set(id, cost - charged.get(id)!);
  const given = (m: Map<string, bigint>) => new Map([...m].filter(([, take]) => take > 0n));
  return {
    after,
    charges,
    charged: [...charged].filter(([, amount]) => amount > 0n).map(([id]) => id),
    shortfalls,
    taken: given(leaseTakes),
    keyTaken: given(keyTakes),
  };
}
