/**
 * What a key's own checks add to each call, in process (docs/keys.md): the checks every
 * authenticated request passes (expiry, rpm) plus those of an LLM call (allow-list, tpm counted at
 * admission and corrected at settlement), timed per call. Keys: one with no limits (the default
 * key), one with a 20-entry allow-list + rpm + tpm on the in-process store, and the same on Redis
 * (alone, then 64 calls at once), with limits far above the run and with limits the run nearly
 * fills (the leases shrink as the window fills: more refills). rpm and tpm are admitted from
 * per-instance leases of the store counter, so the store round trips (INCRBYs) per 1,000 calls are
 * counted too. A budgeted key's LLM hold comes from the instance's lease on the key's budget, timed last
 * (lease growths are real statements against Postgres; the settlement, after the client's last
 * byte, is simulated).
 *
 *   bun run bench/keys.ts [--calls 20000]
 */
import { LlmKeyGate } from '../src/keys/llm-key-gate.ts';
import type { KeyPolicy } from '../src/keys/key-policy.ts';
import { KeyRateLimits } from '../src/keys/key-rate-limits.ts';
import { checkKeyRequest } from '../src/keys/key-request-check.ts';
import { connectStore } from '../src/store/connect.ts';
import type { Store } from '../src/store/store.ts';
import { createAccount } from '../src/accounts/accounts.repository.ts';
import { connectDatabase } from '../src/db/connect.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { insertKey } from '../src/keys/api-keys.repository.ts';
import { KeyBudgets } from '../src/keys/key-budgets.ts';
import { Logger } from '../src/ops/logger.ts';
import { REDIS_URL, createTestDatabase } from '../tests/helpers/services.ts';
import { numberArg } from './lib/cli-args.ts';

const CALLS = numberArg('--calls', 20_000);

const request = {
  model: 'acme/chat-large',
  maxTokens: 256,
  messages: [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'hello there, how are you?' }] }],
};
const hold = { units: 1_000_000n, inputTokens: 40, outputTokens: 256, toolCallsUsd: 0 };
const noBudgets = {} as KeyBudgets; // no policy below has a budget: never called

const unrestricted: KeyPolicy = { models: null, rpm: null, tpm: null, expiresAt: null, budgeted: false };
const limited: KeyPolicy = {
  models: [...Array.from({ length: 19 }, (_, i) => `vendor${i}/model-${i}`), 'acme/*'],
  rpm: 1_000_000_000,
  tpm: 1_000_000_000,
  expiresAt: Date.now() + 3600_000,
  budgeted: false,
};
/** Limits the warm-up + timed calls fill to about 90% (300 tokens a call once settled). */
const nearlyFilled: KeyPolicy = {
  ...limited,
  rpm: Math.ceil((CALLS + 2000) / 0.9),
  tpm: Math.ceil(((CALLS + 2000) * 300) / 0.9),
};

/** The store, counting its INCRBYs: the round trips the checks made. */
function counting(store: Store): { store: Store; incrs: () => number } {
  let incrs = 0;
  const counted = new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === 'incr') incrs++;
      return Reflect.get(target, prop, receiver);
    },
  });
  return { store: counted, incrs: () => incrs };
}

/**
 * One call's worth of key checks on the request path (the request check, the allow-list,
 * admission); answers the settlement, which runs after the client's last byte (not timed).
 */
async function oneCall(gate: LlmKeyGate, limits: KeyRateLimits, keyId: number, policy: KeyPolicy): Promise<() => void> {
  const auth = { accountId: 1, keyId, policy };
  const refused = await checkKeyRequest(keyId, policy, limits);
  if (refused) throw new Error(`refused: ${refused.kind}`);
  gate.checkModel('openai', auth, request.model);
  const ticket = await gate.admit('openai', auth, request as never, hold);
  return () => gate.settled(ticket, 300);
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;

type Row = { p50: number; p99: number; incrsPer1000: number; cpuUs: number };

/** This process's CPU time (user + system) in µs: less disturbed by other work than latency. */
const cpuNow = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

async function sequential(base: Store, policy: KeyPolicy, keyId: number): Promise<Row> {
  const { store, incrs } = counting(base);
  const limits = new KeyRateLimits(store);
  const gate = new LlmKeyGate(noBudgets, limits);
  for (let i = 0; i < 2000; i++) await (await oneCall(gate, limits, keyId, policy))(); // warm-up
  const incrs0 = incrs();
  const cpu0 = cpuNow();
  const times: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    const start = Bun.nanoseconds();
    const settle = await oneCall(gate, limits, keyId, policy);
    times.push((Bun.nanoseconds() - start) / 1e6);
    settle();
  }
  times.sort((a, b) => a - b);
  return {
    p50: percentile(times, 0.5),
    p99: percentile(times, 0.99),
    incrsPer1000: ((incrs() - incrs0) * 1000) / CALLS,
    cpuUs: (cpuNow() - cpu0) / CALLS,
  };
}

/** 64 calls at a time: the wall time of a batch divided by 64 (what each call costs the process). */
async function concurrent(base: Store, policy: KeyPolicy, keyId: number): Promise<Row> {
  const { store, incrs } = counting(base);
  const limits = new KeyRateLimits(store);
  const gate = new LlmKeyGate(noBudgets, limits);
  const perCall: number[] = [];
  const cpu0 = cpuNow();
  for (let round = 0; round < CALLS / 64; round++) {
    const start = Bun.nanoseconds();
    const settles = await Promise.all(Array.from({ length: 64 }, () => oneCall(gate, limits, keyId, policy)));
    perCall.push((Bun.nanoseconds() - start) / 1e6 / 64);
    for (const settle of settles) settle();
  }
  perCall.sort((a, b) => a - b);
  return {
    p50: percentile(perCall, 0.5),
    p99: percentile(perCall, 0.99),
    incrsPer1000: (incrs() * 1000) / CALLS,
    cpuUs: (cpuNow() - cpu0) / CALLS,
  };
}

const memory = await connectStore(undefined);
const redis = await connectStore(REDIS_URL, `bench-keys-${process.pid}:`);
const rows: Array<[string, Row]> = [
  ['no limits (default key), in-process store', await sequential(memory, unrestricted, 1)],
  ['20 models + rpm + tpm, in-process store', await sequential(memory, limited, 2)],
  ['20 models + rpm + tpm, Redis, one call at a time', await sequential(redis, limited, 3)],
  ['20 models + rpm + tpm, Redis, 64 calls at once (per call)', await concurrent(redis, limited, 4)],
  ['20 models + rpm + tpm the run fills to 90%, Redis, one at a time', await sequential(redis, nearlyFilled, 5)],
];
await redis.close();

const database = await connectDatabase({ databaseUrl: await createTestDatabase('benchkeys'), dataDir: '/tmp' });
await migrateToLatest(database.db);
const { account } = await createAccount(database.db, { email: `bench-${process.pid}@example.com`, balance: 0n });
const { record } = await insertKey(database.db, account.id, {
  name: 'budgeted',
  budget: 10n ** 20n,
  budgetPeriod: 'month',
  models: null,
  rpm: null,
  tpm: null,
  expiresAt: null,
});
// The key's hold as an LLM call takes it: from this instance's lease on the key's budget, grown by a
// real statement when it runs short. Each call's settlement is simulated (the charge, a tenth of the
// hold, leaves the lease here as the settlement statement would take it from the row), so the lease
// runs short, and grows, as often as under real traffic.
const budgets = new KeyBudgets(database.db, new Logger('warn'));
const holdTimes: number[] = [];
const holdCalls = Math.min(CALLS, 20_000);
for (let i = 0; i < holdCalls + 2000; i++) {
  const start = Bun.nanoseconds();
  const held = await budgets.reserve(record.id, hold.units);
  if (i >= 2000) holdTimes.push((Bun.nanoseconds() - start) / 1e6);
  if (!held.ok) throw new Error('hold refused');
  const lease = budgets.holdOf(held.id)?.leaseId ?? '';
  budgets.settled([held.id], new Map([[lease, hold.units / 10n]]));
}
await budgets.stop();
holdTimes.sort((a, b) => a - b);
rows.push([
  `budgeted key: the budget hold from the lease, Postgres (${holdCalls} calls)`,
  { p50: percentile(holdTimes, 0.5), p99: percentile(holdTimes, 0.99), incrsPer1000: 0, cpuUs: Number.NaN },
]);
await database.close();

console.log(`\n${CALLS} calls each\n`);
console.log('| key | p50 ms per call | p99 ms per call | CPU µs per call | store INCRBYs per 1,000 calls |');
console.log('| --- | --- | --- | --- | --- |');
for (const [name, r] of rows)
  console.log(
    `| ${name} | ${r.p50.toFixed(4)} | ${r.p99.toFixed(4)} | ${Number.isNaN(r.cpuUs) ? '' : r.cpuUs.toFixed(2)} | ${r.incrsPer1000.toFixed(1)} |`,
  );
