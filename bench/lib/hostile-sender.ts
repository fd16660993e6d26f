/**
 * A generator of hostile requests for a load benchmark, run as its own process:
 *
 *   bun run bench/lib/hostile-sender.ts <port> <api key> <seconds> <req/s> <slow bodies> [kinds]
 *
 * For `seconds` it sends, open loop at `req/s` (at most 64 in flight), a rotating mix of the kinds
 * tests/integration/hostile-input.test.ts drives every route with — NUL bytes and lone surrogates
 * in fields, nesting 300 and 20,000 deep, huge numbers, undecodable percent-encodings in paths and
 * query strings, wrong types, oversize bodies (declared and chunked) — and keeps `slow bodies`
 * connections sending one byte every 200 ms (the gateway's body deadline answers them). Every
 * request carries the account's valid key (a flood of bad keys would trip the per-address
 * authentication throttle for everyone on 127.0.0.1). `kinds`, comma-separated, keeps only the kinds
 * whose name contains one of them (`slow` for the slow bodies), to find which kind costs what. Prints one JSON line at the end:
 * `{"sent": N, "byKind": {kind: {status: count}}, "statuses": {status: count}}`, status 0 = no answer.
 */
import { rawRequest, type RawRequest } from '../../tests/helpers/raw-http.ts';

const [portArg, key = '', secondsArg, rateArg, slowArg, kindsArg = ''] = process.argv.slice(2);
const FILTER = kindsArg.split(',').filter(Boolean);
const wanted = (kind: string) => FILTER.length === 0 || FILTER.some((f) => kind.includes(f));
const PORT = Number(portArg);
const SECONDS = Number(secondsArg ?? 10);
const RATE = Number(rateArg ?? 50);
const SLOW = Number(slowArg ?? 8);
const MAX_IN_FLIGHT = 64;
const MB = 1024 * 1024;
if (!PORT || !key) throw new Error('usage: hostile-sender.ts <port> <api key> <seconds> <req/s> <slow bodies>');

const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
const nest = (depth: number, kind: 'array' | 'object') =>
  kind === 'array' ? `${'['.repeat(depth)}1${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
const chat = (fields: string) =>
  `{"model":"fake/bench","messages":[{"role":"user","content":"hi"}],"max_tokens":16,${fields}}`.replace(',}', '}');
const post = (path: string, text: string): RawRequest => ({
  method: 'POST',
  path,
  headers: auth,
  body: { data: Buffer.from(text) },
});
const get = (path: string): RawRequest => ({ method: 'GET', path, headers: auth });

/** Each kind: a name and the request it sends (JSON text written by hand, so lone surrogates and huge numbers stay as sent). */
const ALL_KINDS: Array<[string, () => RawRequest]> = [
  ['nul in model', () => post('/v1/chat/completions', chat('"model":"fake/\\u0000bench"'))],
  [
    'nul in content',
    () => post('/v1/chat/completions', '{"model":"fake/bench","messages":[{"role":"user","content":"a\\u0000b"}]}'),
  ],
  [
    'lone surrogate',
    () => post('/v1/chat/completions', '{"model":"fake/bench","messages":[{"role":"user","content":"x\\ud800"}]}'),
  ],
  ['lone surrogate key', () => post('/v1/chat/completions', chat('"\\udc00":"\\ud800"'))],
  ['nest 300', () => post('/v1/chat/completions', `{"model":"fake/bench","messages":${nest(300, 'array')}}`)],
  ['nest 20000', () => post('/v1/chat/completions', nest(20_000, 'object'))],
  ['nest 20000 tasks', () => post('/v1/tasks', `{"model":"fake/bench","input":${nest(20_000, 'object')}}`)],
  ['huge number', () => post('/v1/chat/completions', chat('"max_tokens":1e400'))],
  ['huge integer', () => post('/v1/chat/completions', chat('"temperature":99999999999999999999'))],
  ['wrong types', () => post('/v1/chat/completions', '{"model":5,"messages":"x","stream":"yes"}')],
  ['not json', () => post('/v1/chat/completions', '{"model":')],
  ['bad path %ff', () => post('/v1/chat/completions%ff', chat(''))],
  ['bad path surrogate', () => get('/v1/tasks/%ed%a0%80')],
  ['bad path nul', () => get('/v1/models/%00')],
  ['bad query', () => get('/v1/tasks?page=%ff&page_size=99999999999999999999')],
  [
    'oversize declared',
    () => ({ method: 'POST', path: '/v1/chat/completions', headers: auth, body: { total: 40 * MB } }),
  ],
  [
    'oversize chunked',
    () => ({ method: 'POST', path: '/v1/tasks', headers: auth, body: { total: 2 * MB, chunked: true } }),
  ],
];
const KINDS = ALL_KINDS.filter(([kind]) => wanted(kind));

const byKind = new Map<string, Map<number, number>>();
const count = (kind: string, status: number) => {
  const m = byKind.get(kind) ?? new Map<number, number>();
  m.set(status, (m.get(status) ?? 0) + 1);
  byKind.set(kind, m);
};

async function sendOne(kind: string, req: RawRequest): Promise<void> {
  try {
    const res = await rawRequest(PORT, { ...req, timeoutMs: req.timeoutMs ?? 15_000 }, 0);
    count(kind, res.status);
  } catch {
    count(kind, 0);
  }
}

const until = Date.now() + SECONDS * 1000;

/** Slow bodies: one connection each, 1 byte every 200 ms, reopened as soon as it is answered. */
const slow = Array.from({ length: wanted('slow body') ? SLOW : 0 }, async () => {
  while (Date.now() < until) {
    await sendOne('slow body', {
      method: 'POST',
      path: '/v1/chat/completions',
      headers: auth,
      body: { total: 4096, chunkSize: 1, delayMs: 200 },
      timeoutMs: 60_000,
    });
  }
});

let inFlight = 0;
let sent = 0;
const pending = new Set<Promise<void>>();
const start = performance.now();
while (KINDS.length > 0 && Date.now() < until) {
  // Open loop: the n-th request is due at n / RATE seconds, whatever the answers do (up to MAX_IN_FLIGHT).
  const due = start + (sent * 1000) / RATE;
  const wait = due - performance.now();
  if (wait > 0) await Bun.sleep(wait);
  if (inFlight >= MAX_IN_FLIGHT) {
    await Promise.race(pending);
    continue;
  }
  const [kind, make] = KINDS[sent % KINDS.length] as [string, () => RawRequest];
  sent++;
  inFlight++;
  const p: Promise<void> = sendOne(kind, make()).finally(() => {
    inFlight--;
    pending.delete(p);
  });
  pending.add(p);
}
await Promise.all([...pending, ...slow]);

const statuses = new Map<number, number>();
for (const m of byKind.values()) for (const [s, n] of m) statuses.set(s, (statuses.get(s) ?? 0) + n);
const obj = (m: Map<number, number>) => Object.fromEntries([...m].sort(([a], [b]) => a - b));
console.log(
  JSON.stringify({
    sent: [...statuses.values()].reduce((a, b) => a + b, 0),
    byKind: Object.fromEntries([...byKind].map(([k, m]) => [k, obj(m)])),
    statuses: obj(statuses),
  }),
);
process.exit(0);
