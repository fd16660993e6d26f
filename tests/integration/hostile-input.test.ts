import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { signWebhook } from '../../providers/replicate/replicate-signature.ts';
import { SANDBOX_CONFIG } from '../../src/config/sandbox-catalog.ts';
import { requestHash } from '../../src/tasks/request-hash.ts';
import { api, createAccount, uniqueEmail } from '../helpers/api.ts';
import { ADMIN_TOKEN, freePort, MODES, startGateway, type GatewayProcess } from '../helpers/gateway-process.ts';
import { rawRequest } from '../helpers/raw-http.ts';
import { queryDatabase } from '../helpers/services.ts';

/**
 * Integrity under hostile input. A gateway process is driven on EVERY route with NUL bytes,
 * unpaired surrogates, deep nesting (300 and 20,000 levels), huge numbers, undecodable
 * percent-encodings in paths and query strings, and wrong types — enumerated per route and
 * field, then at random with fast-check. No answer may be a 5xx, every 4xx comes in the
 * endpoint's own error shape, and meanwhile another account's task creations and LLM calls keep
 * succeeding and are billed exactly.
 */

const WEBHOOK_SECRET = `whsec_${Buffer.from('hostile-input-suite-webhook-key!').toString('base64')}`;
const VICTIM_BALANCE = 1000;
const MB = 1024 * 1024;

// ---------------------------------------------------------------------------------------------
// Hostile values
// ---------------------------------------------------------------------------------------------

/** JSON text put into a body as it is (numbers JSON.stringify cannot write, deep nests). */
const RAW = Symbol('raw');
type Raw = { [RAW]: string };
const raw = (text: string): Raw => ({ [RAW]: text });
const isRaw = (value: unknown): value is Raw => typeof value === 'object' && value !== null && RAW in value;

function nest(depth: number, kind: 'array' | 'object', leaf = '1'): string {
  return kind === 'array'
    ? `${'['.repeat(depth)}${leaf}${']'.repeat(depth)}`
    : `${'{"a":'.repeat(depth)}${leaf}${'}'.repeat(depth)}`;
}

/** Serialises with RAW pieces inlined; strings as JSON.stringify writes them (lone surrogates as \udXXX). */
function toJson(value: unknown): string {
  if (isRaw(value)) return value[RAW];
  if (Array.isArray(value)) return `[${value.map(toJson).join(',')}]`;
  if (value && typeof value === 'object')
    return `{${Object.entries(value)
      .map(([k, v]) => `${JSON.stringify(k)}:${toJson(v)}`)
      .join(',')}}`;
  return JSON.stringify(value) ?? 'null';
}

const HOSTILE_VALUES: unknown[] = [
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udc00y',
  '\udfff\ud800',
  '',
  ' ',
  'x'.repeat(40_000),
  '%00',
  '../../etc/passwd',
  raw('99999999999999999999'),
  raw('1e400'),
  raw('-1e400'),
  raw('-0'),
  raw('1e-400'),
  1e308,
  -1,
  0,
  0.5,
  2147483648,
  -2147483649,
  9007199254740993,
  true,
  false,
  null,
  [],
  {},
  [null],
  ['\u0000'],
  { '\u0000': 1 },
  { '\ud800': '\ud800' },
  raw(nest(300, 'array')),
  raw(nest(300, 'object')),
  raw(nest(300, 'array', '"\\u0000"')),
  'http://127.0.0.1:1/x',
  'http://[::1]/x',
  'http://169.254.169.254/latest/meta-data',
  'file:///etc/passwd',
  'javascript:alert(1)',
  `gw_${'a'.repeat(48)}`,
];

/** Whole bodies that are not (or barely) JSON. */
const RAW_BODIES: string[] = [
  '',
  '{',
  'null',
  '[]',
  '"\\u0000"',
  '"\\ud800"',
  '{"\\u0000":"\\u0000"}',
  '1e400',
  '99999999999999999999',
  '\u0000',
  '{"a":1,"a":2}',
  nest(300, 'array'),
  nest(300, 'object'),
  nest(20_000, 'array'),
  nest(20_000, 'object'),
  `{"model":"sandbox/echo","messages":${nest(20_000, 'array')}}`,
  `{"model":"sandbox/image","input":${nest(20_000, 'object')}}`,
];

const HOSTILE_SEGMENTS = [
  '%00',
  'x%00y',
  '%ff',
  '%c0%ae',
  '%ed%a0%80',
  '%',
  '%zz',
  '%E2%82',
  '99999999999999999999',
  '2147483648',
  '-1',
  '0',
  '1e309',
  'NaN',
  '%2e%2e',
  '%2F',
  '%20',
  'null',
  'A'.repeat(3000),
  '%F0%9F%98%80',
  '%ef%bf%bd',
  '%3Cscript%3E',
];

const HOSTILE_QUERY_VALUES = [
  '%00',
  'a%00b',
  '%ff',
  '%c0%ae',
  '%ed%a0%80',
  '%',
  '%zz',
  '99999999999999999999',
  '-1',
  '0',
  '1e309',
  '-0',
  '0x10',
  '8640000000001',
  '253402300800',
  '1.5',
  '',
  'a,b,,',
  '%2C%2C%2C',
  'null',
  'A'.repeat(3000),
  '%F0%9F%98%80',
  'true',
];

// ---------------------------------------------------------------------------------------------
// Routes (src/routes/*.ts)
// ---------------------------------------------------------------------------------------------

type Shape = 'envelope' | 'openai' | 'anthropic' | 'motion';
type Auth = 'key' | 'admin' | 'none' | 'x-api-key';

interface Route {
  method: string;
  /** `:name` segments are filled with real values (fillPath), then fuzzed one at a time. */
  path: string;
  auth: Auth;
  query?: string[];
  /** A valid JSON body to mutate field by field. */
  body?: Record<string, unknown>;
}

interface Ids {
  task: string;
  response: string;
  file: string;
  account: string;
}

const shapeOf = (raw: string): Shape => {
  // The router reads `//clips/motions` as `/clips/motions`: so does the shape.
  const path = raw.replace(/\/{2,}/g, '/');
  if (
    path.startsWith('/v1/chat/completions') ||
    path.startsWith('/v1/responses') ||
    path.startsWith('/v1/models') ||
    path.startsWith('/v1/embeddings')
  )
    return 'openai';
  if (path.startsWith('/v1/messages')) return 'anthropic';
  // The declared motion-preset product of the sandbox; an unknown product is no motion endpoint (envelope 404).
  if (/^(\/v1)?\/clips\/motions\/?$/.test(path)) return 'motion';
  return 'envelope';
};

function routes(): Route[] {
  const image = { model: 'sandbox/image', input: { prompt: 'a fox', width: 64, height: 64, delay_ms: 0 } };
  return [
    { method: 'GET', path: '/healthz', auth: 'none' },
    { method: 'GET', path: '/readyz', auth: 'none' },
    { method: 'GET', path: '/openapi.json', auth: 'none' },
    {
      method: 'POST',
      path: '/upstream-webhooks/:provider',
      auth: 'none',
      query: ['task'],
      body: { id: 'p1', status: 'succeeded', output: ['https://example.com/x.png'], error: null },
    },
    { method: 'GET', path: '/files/:file', auth: 'none' },
    { method: 'HEAD', path: '/files/:file', auth: 'none' },
    { method: 'PUT', path: '/upload', auth: 'key', body: { base64: 'QUJD' } },
    { method: 'POST', path: '/admin/accounts', auth: 'admin', body: { email: 'hostile@example.com', balance_usd: 1 } },
    { method: 'POST', path: '/admin/accounts/:account/topup', auth: 'admin', body: { amount_usd: 0.01 } },
    { method: 'GET', path: '/admin/accounts/:account', auth: 'admin' },
    { method: 'GET', path: '/v1/models', auth: 'key', query: ['category'] },
    { method: 'GET', path: '/v1/models/:model', auth: 'key' },
    { method: 'GET', path: '/v1/models/sandbox/:name', auth: 'key' },
    { method: 'GET', path: '/v1/account', auth: 'key' },
    { method: 'GET', path: '/account', auth: 'key' },
    { method: 'GET', path: '/v1/account/webhook-signing', auth: 'key' },
    { method: 'POST', path: '/v1/account/webhook-signing', auth: 'key', body: { enabled: false } },
    { method: 'POST', path: '/v1/account/webhook-signing/reset', auth: 'key', body: {} },
    { method: 'GET', path: '/v1/account/spend', auth: 'key', query: ['days'] },
    { method: 'GET', path: '/dashboard', auth: 'none' },
    { method: 'GET', path: '/dashboard/assets/:asset', auth: 'none' },
    { method: 'GET', path: '/dashboard/tasks/:task', auth: 'none' },
    { method: 'POST', path: '/dashboard/api/session', auth: 'none', body: { api_key: 'gw_not_a_real_key' } },
    { method: 'GET', path: '/dashboard/api/session', auth: 'none' },
    { method: 'DELETE', path: '/dashboard/api/session', auth: 'none' },
    { method: 'POST', path: '/v1/tasks', auth: 'key', body: image },
    {
      method: 'POST',
      path: '/v1/tasks',
      auth: 'key',
      body: { model: 'sandbox/speech', input: { text: 'hello', voice_id: 'rachel' }, dry_run: true },
    },
    {
      method: 'POST',
      path: '/v1/tasks',
      auth: 'key',
      body: { model: 'sandbox/video', input: { prompt: 'a fox', duration: 5, voices: [1] }, dry_run: true },
    },
    {
      method: 'POST',
      path: '/v1/tasks',
      auth: 'key',
      body: { model: 'rephook/flux', input: { prompt: 'a fox' }, dry_run: true },
    },
    {
      method: 'GET',
      path: '/v1/tasks',
      auth: 'key',
      query: ['page', 'page_size', 'status', 'model', 'category', 'provider', 'created_after', 'created_before'],
    },
    { method: 'GET', path: '/v1/tasks/:task', auth: 'key' },
    { method: 'POST', path: '/v1/tasks/:task/callbacks/redeliver', auth: 'key' },
    {
      method: 'POST',
      path: '/:slug/generate',
      auth: 'key',
      body: { prompt: 'a fox', width: 64, height: 64, delay_ms: 0 },
    },
    { method: 'GET', path: '/v1/resources/:vendor/clips/voices', auth: 'key' },
    { method: 'GET', path: '/v1/resources/sandbox/:product/voices', auth: 'key' },
    { method: 'GET', path: '/v1/resources/sandbox/voices/:family', auth: 'key' },
    { method: 'GET', path: '/v1/resources/:vendor/voices', auth: 'key' },
    {
      method: 'POST',
      path: '/v1/resources/:vendor/voices',
      auth: 'key',
      body: { samples: ['http://127.0.0.1:1/sample.wav'], name: 'mine' },
    },
    { method: 'GET', path: '/v1/resources/:vendor/voice/verification-phrase', auth: 'key', query: ['language'] },
    { method: 'GET', path: '/v1/resources/sandbox/samples/:sample', auth: 'none' },
    { method: 'GET', path: '/clips/motions', auth: 'key', query: ['size', 'category', 'search'] },
    { method: 'GET', path: '/v1/clips/motions', auth: 'key', query: ['size', 'category', 'search'] },
    {
      method: 'POST',
      path: '/v1/chat/completions',
      auth: 'key',
      body: { model: 'sandbox/echo', messages: [{ role: 'user', content: 'hi' }], max_tokens: 16 },
    },
    {
      method: 'POST',
      path: '/v1/chat/completions',
      auth: 'key',
      body: { model: 'sandbox/echo', messages: [{ role: 'user', content: 'hi' }], stream: true },
    },
    {
      method: 'POST',
      path: '/v1/responses',
      auth: 'key',
      body: { model: 'sandbox/echo', input: 'hi', previous_response_id: ':response' },
    },
    {
      method: 'POST',
      path: '/v1/responses',
      auth: 'key',
      body: {
        model: 'sandbox/echo',
        input: [
          { type: 'item_reference', id: 'msg_x' },
          { role: 'user', content: 'hi' },
        ],
      },
    },
    { method: 'GET', path: '/v1/responses/:response', auth: 'key' },
    {
      method: 'POST',
      path: '/v1/messages',
      auth: 'x-api-key',
      body: { model: 'sandbox/echo', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] },
    },
    {
      method: 'POST',
      path: '/v1/messages/count_tokens',
      auth: 'x-api-key',
      body: { model: 'sandbox/echo', system: 'be brief', messages: [{ role: 'user', content: 'hi' }] },
    },
    {
      method: 'POST',
      path: '/v1/embeddings',
      auth: 'key',
      body: { model: 'sandbox/embed', input: ['hi', 'there'], dimensions: 8, encoding_format: 'base64' },
    },
    { method: 'POST', path: '/v1/embeddings', auth: 'key', body: { model: 'sandbox/embed', input: [[1, 2], [3]] } },
  ];
}

/** The real value of each named path segment, so only the fuzzed one is hostile. */
function fillPath(path: string, ids: Ids): string {
  const values: Record<string, string> = {
    provider: 'rephook',
    file: ids.file,
    account: ids.account,
    model: 'sandbox',
    name: 'echo',
    asset: 'app.js',
    task: ids.task,
    slug: 'sandbox-image',
    vendor: 'sandbox',
    product: 'clips',
    family: 'sandbox-video-1',
    sample: 'aoede.wav',
    response: ids.response,
  };
  return path.replace(/:([a-z]+)/g, (_, name: string) => encodeURIComponent(values[name] ?? name));
}

/** The route's valid body, with the stored response's real id in it. */
const validBody = (route: Route, ids: Ids): unknown =>
  route.body ? JSON.parse(JSON.stringify(route.body).replace(':response', ids.response)) : undefined;

/** Every variant of the path with one segment (a parameter or a literal) replaced by a hostile one. */
function pathVariants(route: Route, ids: Ids): string[] {
  const filled = fillPath(route.path, ids).split('/');
  const out: string[] = [];
  for (let i = 1; i < filled.length; i++) {
    for (const hostile of HOSTILE_SEGMENTS)
      out.push([...filled.slice(0, i), hostile, ...filled.slice(i + 1)].join('/'));
  }
  return out;
}

function leafPaths(value: unknown, prefix: Array<string | number> = []): Array<Array<string | number>> {
  if (Array.isArray(value))
    return value.length
      ? [prefix, ...value.flatMap((item, i) => leafPaths(item, [...prefix, i]))].filter((p) => p.length)
      : [prefix];
  if (value && typeof value === 'object') {
    const entries = Object.entries(value);
    return entries.length
      ? [prefix, ...entries.flatMap(([k, v]) => leafPaths(v, [...prefix, k]))].filter((p) => p.length)
      : [prefix];
  }
  return [prefix];
}

function setAt(value: unknown, path: Array<string | number>, replacement: unknown): unknown {
  if (path.length === 0) return replacement;
  const [head, ...rest] = path as [string | number, ...Array<string | number>];
  if (Array.isArray(value)) return value.map((item, i) => (i === head ? setAt(item, rest, replacement) : item));
  const obj = { ...(value as Record<string, unknown>) };
  obj[head as string] = setAt(obj[head as string], rest, replacement);
  return obj;
}

/** Body texts for a route: every field replaced by every hostile value, hostile keys, hostile wholes, raw texts. */
function bodyVariants(route: Route, ids: Ids): string[] {
  const base = validBody(route, ids);
  if (base === undefined) return [];
  const out = [...RAW_BODIES];
  for (const path of leafPaths(base)) for (const value of HOSTILE_VALUES) out.push(toJson(setAt(base, path, value)));
  for (const key of ['\u0000', '\ud800', '__proto__', 'constructor', 'x'.repeat(10_000)])
    out.push(toJson({ ...(base as object), [key]: { '\u0000': '\ud800' } }));
  for (const value of HOSTILE_VALUES) out.push(toJson(value));
  return out;
}

// ---------------------------------------------------------------------------------------------
// Sending and judging
// ---------------------------------------------------------------------------------------------

interface Sent {
  method: string;
  target: string;
  /** What was sent, shortened, for the report. */
  sentBody?: string;
  status: number;
  body: string;
  note?: string;
}

interface Client {
  gw: GatewayProcess;
  key: string;
}

function authHeaders(auth: Auth, key: string): Record<string, string> {
  if (auth === 'key') return { authorization: `Bearer ${key}` };
  if (auth === 'x-api-key') return { 'x-api-key': key, 'anthropic-version': '2023-06-01' };
  if (auth === 'admin') return { authorization: `Bearer ${ADMIN_TOKEN}` };
  return {};
}

function shorten(body: string | Uint8Array | undefined): string | undefined {
  if (body === undefined) return undefined;
  const text = typeof body === 'string' ? body : `<${body.byteLength} bytes>`;
  return JSON.stringify(text.length > 120 ? `${text.slice(0, 120)}…(${text.length})` : text);
}

async function send(
  client: Client,
  method: string,
  target: string,
  opts: { auth?: Auth; body?: string | Uint8Array; headers?: Record<string, string>; timeoutMs?: number } = {},
): Promise<Sent> {
  const headers: Record<string, string> = { ...authHeaders(opts.auth ?? 'none', client.key), ...opts.headers };
  if (opts.body !== undefined) headers['content-type'] ??= 'application/json';
  const body = method === 'GET' || method === 'HEAD' ? undefined : opts.body;
  try {
    const res = await fetch(`${client.gw.url}${target}`, {
      method,
      headers,
      body: body as BodyInit | undefined,
      signal: AbortSignal.timeout(opts.timeoutMs ?? 30_000),
    });
    const text = await res.text();
    return { method, target, sentBody: shorten(body), status: res.status, body: text };
  } catch (err) {
    return { method, target, sentBody: shorten(body), status: 0, body: '', note: (err as Error).message };
  }
}

/** Why this answer breaks the rules (a 5xx, no answer, or a 4xx not in the endpoint's shape); undefined when it keeps them. */
function violation(sent: Sent): string | undefined {
  if (sent.status === 0) return `no answer (${sent.note})`;
  if (sent.status >= 500) return `status ${sent.status}`;
  if (sent.status < 400 || sent.method === 'HEAD') return undefined;
  let body: any;
  try {
    body = JSON.parse(sent.body);
  } catch {
    return `status ${sent.status} without a JSON body`;
  }
  // The path as the server sees it (`%2e%2e` is resolved by URL parsing before routing).
  const shape = shapeOf(new URL(`http://gateway${sent.target}`).pathname);
  const ok =
    shape === 'openai'
      ? typeof body?.error?.message === 'string'
      : shape === 'anthropic'
        ? body?.type === 'error' && typeof body?.error?.message === 'string'
        : shape === 'motion'
          ? body?.code === sent.status && typeof body?.error?.message === 'string'
          : body?.success === false && body?.code === sent.status && typeof body?.data?.message === 'string';
  return ok ? undefined : `status ${sent.status} not in the ${shape} error shape`;
}

const describeSent = (sent: Sent, why: string) =>
  `${sent.method} ${sent.target.length > 160 ? `${sent.target.slice(0, 160)}…` : sent.target}${sent.sentBody ? ` ${sent.sentBody}` : ''} → ${why}: ${sent.body.slice(0, 200)}`;

/** The gateway's own account of what went wrong: its error log lines, shortened. */
function loggedErrors(output: string): string[] {
  return output
    .split('\n')
    .filter((line) => line.includes('"level":"error"'))
    .map((line) => {
      try {
        const entry = JSON.parse(line);
        return `${entry.msg} ${entry.path ?? ''}: ${entry.error ?? ''}`.slice(0, 300);
      } catch {
        return line.slice(0, 300);
      }
    });
}

/** Runs `jobs` with at most `width` in flight; returns how many ran and every violation found. */
async function pool(width: number, jobs: Array<() => Promise<Sent>>): Promise<{ count: number; violations: string[] }> {
  const violations: string[] = [];
  let next = 0;
  let count = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const job = jobs[next++] as () => Promise<Sent>;
      const sent = await job();
      count++;
      const why = violation(sent);
      if (why) violations.push(describeSent(sent, why));
    }
  };
  await Promise.all(Array.from({ length: width }, worker));
  return { count, violations };
}

const dedupe = (list: string[]) => [...new Set(list.map((v) => v.replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, '<id>')))];

// ---------------------------------------------------------------------------------------------
// The victim: ordinary traffic that must go on, billed exactly
// ---------------------------------------------------------------------------------------------

interface VictimLog {
  tasks: number;
  chats: number;
  failures: string[];
}

function victimTraffic(client: Client, until: { done: boolean }): Promise<VictimLog> {
  const log: VictimLog = { tasks: 0, chats: 0, failures: [] };
  const loop = async (kind: 'task' | 'chat') => {
    let i = 0;
    while (!until.done) {
      i++;
      const sent =
        kind === 'task'
          ? await send(client, 'POST', '/v1/tasks', {
              auth: 'key',
              body: JSON.stringify({
                model: 'sandbox/image',
                input: { prompt: `victim ${i}`, width: 64, height: 64, delay_ms: 0 },
              }),
            })
          : await send(client, 'POST', '/v1/chat/completions', {
              auth: 'key',
              body: JSON.stringify({ model: 'sandbox/echo', messages: [{ role: 'user', content: `victim ${i}` }] }),
            });
      if (sent.status === 200) {
        if (kind === 'task') log.tasks++;
        else log.chats++;
      } else {
        log.failures.push(describeSent(sent, `victim ${kind} failed`));
      }
      await Bun.sleep(100);
    }
  };
  return Promise.all([loop('task'), loop('chat')]).then(() => log);
}

async function allTasks(gw: GatewayProcess, key: string): Promise<any[]> {
  const out: any[] = [];
  for (let page = 1; ; page++) {
    const res = await api(gw, 'GET', `/v1/tasks?page_size=100&page=${page}`, { key });
    expect(res.status).toBe(200);
    out.push(...res.body.data);
    if (!res.body.pagination.has_next) return out;
  }
}

/** Waits until the account lists `count` tasks, none processing; returns them. */
async function settledTasks(gw: GatewayProcess, key: string, count: number, timeoutMs = 120_000): Promise<any[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const tasks = await allTasks(gw, key);
    if ((tasks.length >= count && tasks.every((t) => t.status !== 'processing')) || Date.now() > deadline) return tasks;
    await Bun.sleep(250);
  }
}

async function balanceOf(gw: GatewayProcess, key: string): Promise<number> {
  const res = await api(gw, 'GET', '/v1/account', { key });
  expect(res.status).toBe(200);
  return res.body.data.balance_usd;
}

/** The sandbox catalog plus a Replicate provider whose signed webhook route is live (its upstream is not). */
async function writeConfig(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'gw-hostile-'));
  const path = join(dir, 'gateway.json');
  const deadPort = await freePort();
  const config = {
    providers: [
      ...SANDBOX_CONFIG.providers,
      {
        id: 'rephook',
        kind: 'replicate',
        base_url: `http://127.0.0.1:${deadPort}/v1`,
        api_key: 'r8_hostile',
        max_retries: 0,
        timeout_ms: 500,
        options: { webhooks: 'always', webhook_secret: WEBHOOK_SECRET },
      },
    ],
    models: [
      ...SANDBOX_CONFIG.models,
      {
        id: 'rephook/flux',
        category: 'image',
        display_name: 'Hostile FLUX',
        upstream_model: 'black-forest-labs/flux-schnell',
        pricing: { per_image: 0.003 },
        options: { input: { prompt: { type: 'string', required: true } } },
      },
    ],
  };
  await writeFile(path, JSON.stringify(config));
  return path;
}

function signedWebhook(body: string): Record<string, string> {
  const id = `msg_${crypto.randomUUID()}`;
  const timestamp = String(Math.floor(Date.now() / 1000));
  return {
    'webhook-id': id,
    'webhook-timestamp': timestamp,
    'webhook-signature': signWebhook(WEBHOOK_SECRET, id, timestamp, body),
    'content-type': 'application/json',
  };
}

const authFor = (target: string): Auth =>
  target.startsWith('/admin') ? 'admin' : target === '/v1/messages' ? 'x-api-key' : 'key';

// ---------------------------------------------------------------------------------------------
// The suite
// ---------------------------------------------------------------------------------------------

for (const mode of MODES) {
  describe(`hostile input [${mode.name}]`, () => {
    let gw: GatewayProcess;
    let attacker: Client;
    let victim: Client;
    let ids: Ids;
    let databaseUrl: string | undefined;

    beforeAll(async () => {
      const env = await mode.env('hostile');
      databaseUrl = env.DATABASE_URL;
      gw = await startGateway({
        ...env,
        GATEWAY_CONFIG: await writeConfig(),
        LOG_LEVEL: 'warn',
        RATE_LIMIT_PER_MINUTE: '1000000',
        AUTH_FAILURES_PER_MINUTE: '1000000',
        // A slow body is cut at this deadline; short, so the slow-body case does not cost the suite 30 s.
        BODY_TIMEOUT_MS: '3000',
      });
      const a = await createAccount(gw, uniqueEmail('attacker'), 100_000);
      const v = await createAccount(gw, uniqueEmail('victim'), VICTIM_BALANCE);
      attacker = { gw, key: a.key };
      victim = { gw, key: v.key };

      // Real ids, so each hostile variant changes exactly one thing.
      const task = await api(gw, 'POST', '/v1/tasks', {
        key: a.key,
        body: { model: 'sandbox/image', input: { prompt: 'seed', width: 64, height: 64, delay_ms: 0 } },
      });
      expect(task.status).toBe(200);
      const response = await api(gw, 'POST', '/v1/responses', {
        key: a.key,
        body: { model: 'sandbox/echo', input: 'seed' },
      });
      expect(response.status).toBe(200);
      const upload = await api(gw, 'PUT', '/upload', { key: a.key, body: { base64: 'iVBORw0KGgo=' } });
      expect(upload.status).toBe(200);
      ids = {
        task: task.body.data.task_id,
        response: response.body.id,
        file: String(upload.body.file_url).split('/').pop() as string,
        account: String(a.userId),
      };
    }, 60_000);

    afterAll(async () => {
      await gw?.stop();
    });

    const expectNo5xx = (sent: Sent) => expect(violation(sent)).toBeUndefined();
    const json = (sent: Sent) => JSON.parse(sent.body);

    describe('the reported cases are 4xx in their endpoint’s shape', () => {
      test('undecodable and NUL path segments and query values; ids and numbers that fit no column', async () => {
        const cases: Array<[string, string, Auth, number, RegExp]> = [
          ['GET', '/v1/tasks/%00', 'key', 400, /path/],
          ['GET', '/v1/responses/x%00y', 'key', 400, /path/],
          ['POST', '/v1/tasks/%00/callbacks/redeliver', 'key', 400, /path/],
          ['GET', '/v1/tasks?model=%00', 'key', 422, /^model: /],
          ['GET', '/v1/tasks?provider=%00', 'key', 422, /^provider: /],
          ['GET', '/v1/tasks?page=99999999999999999999', 'key', 422, /^page: /],
          ['GET', '/v1/tasks?created_after=99999999999999999999', 'key', 422, /^created_after: /],
          ['GET', '/v1/tasks?created_after=8640000000001', 'key', 422, /^created_after: /],
          ['GET', '/files/%ff', 'none', 400, /path/],
          ['GET', '/v1/models/%c0%ae', 'key', 400, /path/],
          ['GET', '/admin/accounts/99999999999999999999', 'admin', 404, /account/],
          ['GET', '/clips/motions?search=%00', 'key', 400, /^search: /],
        ];
        for (const [method, target, auth, status, message] of cases) {
          const sent = await send(attacker, method, target, { auth });
          expectNo5xx(sent);
          expect({ target, status: sent.status }).toEqual({ target, status });
          const body = json(sent);
          expect(body.data?.message ?? body.error?.message).toMatch(message);
        }
      });

      test('every Host a client may reach the gateway by routes the same: short service names included', async () => {
        // Elysia assumes by default a host of at least four characters (`http://a.bc`) and found
        // no route at all behind `http://llm/…` (a compose or Kubernetes service on port 80).
        const port = Number(new URL(gw.url).port);
        const auth = { authorization: `Bearer ${attacker.key}` };
        for (const host of ['x', 'ai', 'llm', 'ai:80', `ai:${port}`, '[::1]', 'gateway.internal'])
          expect({
            host,
            status: (await rawRequest(port, { method: 'GET', path: '/v1/models', headers: { host, ...auth } })).status,
          }).toEqual({ host, status: 200 });
        const data = new TextEncoder().encode(
          JSON.stringify({ model: 'sandbox/echo', messages: [{ role: 'user', content: 'hi' }] }),
        );
        const chat = await rawRequest(port, {
          method: 'POST',
          path: '/v1/chat/completions?x=1',
          headers: { host: 'llm', 'content-type': 'application/json', ...auth },
          body: { data },
        });
        expect(chat.status).toBe(200);
        expect(chat.json.object).toBe('chat.completion');
      });

      test('a JSON body sent as another type is refused in the endpoint’s shape, saying which type it came as', async () => {
        const chat = JSON.stringify({ model: 'sandbox/echo', messages: [{ role: 'user', content: 'hi' }] });
        const task = JSON.stringify({ model: 'sandbox/image', input: { prompt: 'x' } });
        const cases: Array<[string, string, Auth, number]> = [
          ['/v1/chat/completions', chat, 'key', 400],
          ['/v1/messages', chat, 'key', 400],
          ['/v1/tasks', task, 'key', 422],
        ];
        for (const [target, body, auth, status] of cases)
          for (const type of ['application/x-www-form-urlencoded', 'text/plain;charset=UTF-8']) {
            const sent = await send(attacker, 'POST', target, { auth, body, headers: { 'content-type': type } });
            expectNo5xx(sent);
            expect({ target, type, status: sent.status }).toEqual({ target, type, status });
            const answer = json(sent);
            expect(answer.data?.message ?? answer.error?.message).toContain(
              `send JSON with content-type: application/json (it came as "${type.toLowerCase().split(';')[0]}")`,
            );
          }
      });

      test('previous_response_id and item references that cannot exist are not found', async () => {
        const previous = await send(attacker, 'POST', '/v1/responses', {
          auth: 'key',
          body: JSON.stringify({ model: 'sandbox/echo', input: 'hi', previous_response_id: '\u0000' }),
        });
        expect(previous.status).toBe(404);
        expect(json(previous).error).toMatchObject({
          param: 'previous_response_id',
          code: 'previous_response_not_found',
        });
        const reference = await send(attacker, 'POST', '/v1/responses', {
          auth: 'key',
          body: JSON.stringify({ model: 'sandbox/echo', input: [{ type: 'item_reference', id: 'msg_\u0000' }] }),
        });
        expect(reference.status).toBe(400);
        expect(json(reference).error.message).toContain('item reference');
        const surrogate = await send(attacker, 'POST', '/v1/responses', {
          auth: 'key',
          body: JSON.stringify({ model: 'sandbox/echo', input: 'hi', previous_response_id: 'resp_\ud800' }),
        });
        expect(surrogate.status).toBe(404);
      });

      test('task inputs with NUL, a lone surrogate or deep nesting are 422s naming the field; nothing is charged', async () => {
        const before = await balanceOf(gw, attacker.key);
        const cases: Array<[unknown, string]> = [
          [{ model: 'sandbox/speech', input: { text: 'hi', voice_id: 'a\u0000' }, dry_run: true }, 'input.voice_id'],
          [{ model: 'sandbox/speech', input: { text: 'hi', voice_id: 'a\u0000' } }, 'input.voice_id'],
          [{ model: 'sandbox/image', input: { prompt: 'fox\u0000' } }, 'input.prompt'],
          [{ model: 'sandbox/image', input: { prompt: 'fox\ud800' } }, 'input.prompt'],
          [{ model: 'sandbox/image', input: { prompt: 'fox', '\u0000': 1 } }, 'input.'],
        ];
        for (const [body, field] of cases) {
          const sent = await send(attacker, 'POST', '/v1/tasks', { auth: 'key', body: JSON.stringify(body) });
          expect({ field, status: sent.status }).toEqual({ field, status: 422 });
          expect(json(sent).data.message).toStartWith(field);
        }
        // Deeper than 64 levels: refused by the body parser (any 4xx) or, past it, naming the field.
        const deep = await send(attacker, 'POST', '/v1/tasks', {
          auth: 'key',
          body: JSON.stringify({
            model: 'sandbox/image',
            input: { prompt: 'fox', extra: { deep: JSON.parse(nest(100, 'array')) } },
          }),
        });
        expectNo5xx(deep);
        expect(deep.status).toBeGreaterThanOrEqual(400);
        if (deep.status === 422)
          expect(json(deep).data.message).toMatch(/^input\.extra\.deep.*nests deeper than 64 levels|deeper|depth|nest/);
        // The legacy route names the body's own top-level field.
        const legacy = await send(attacker, 'POST', '/sandbox-image/generate', {
          auth: 'key',
          body: JSON.stringify({ prompt: 'x\u0000' }),
        });
        expect(legacy.status).toBe(422);
        expect(json(legacy).data.message).toStartWith('prompt:');
        expect(await balanceOf(gw, attacker.key)).toBe(before);
      });

      test('a 20 MB prompt is refused and not charged; strings have a default maximum', async () => {
        const before = await balanceOf(gw, attacker.key);
        const huge = await send(attacker, 'POST', '/v1/tasks', {
          auth: 'key',
          body: JSON.stringify({ model: 'sandbox/image', input: { prompt: 'x'.repeat(20 * MB) } }),
        });
        expectNo5xx(huge);
        expect([413, 422]).toContain(huge.status);
        const long = await send(attacker, 'POST', '/v1/tasks', {
          auth: 'key',
          body: JSON.stringify({ model: 'sandbox/image', input: { prompt: 'x'.repeat(32_001) } }),
        });
        expect(long.status).toBe(422);
        expect(json(long).data.message).toStartWith('input.prompt: must be at most 32000 characters');
        const configured = await send(attacker, 'POST', '/v1/tasks', {
          auth: 'key',
          body: JSON.stringify({ model: 'rephook/flux', input: { prompt: 'x'.repeat(32_001) }, dry_run: true }),
        });
        expect(configured.status).toBe(422);
        expect(json(configured).data.message).toStartWith('input.prompt: must be at most 32000 characters');
        const passThrough = await send(attacker, 'POST', '/v1/tasks', {
          auth: 'key',
          body: JSON.stringify({ model: 'sandbox/image', input: { prompt: 'x', notes: 'y'.repeat(1_000_001) } }),
        });
        expect([413, 422]).toContain(passThrough.status);
        if (passThrough.status === 422) expect(json(passThrough).data.message).toStartWith('input: must be at most');
        expect(await balanceOf(gw, attacker.key)).toBe(before);
      });

      test('SSRF refusals say "private address" and never name what a host resolved to', async () => {
        const sent = await send(attacker, 'POST', '/v1/tasks', {
          auth: 'key',
          body: JSON.stringify({
            model: 'sandbox/image',
            input: { prompt: 'x' },
            callback_url: 'http://localhost:9/hook',
            dry_run: true,
          }),
        });
        expect(sent.status).toBe(422);
        const message = json(sent).data.message as string;
        expect(message).toBe('callback_url: resolves to a private address');
        expect(message).not.toMatch(/127\.0\.0\.1|::1/);
        const literal = await send(attacker, 'POST', '/v1/tasks', {
          auth: 'key',
          body: JSON.stringify({
            model: 'sandbox/image',
            input: { prompt: 'x' },
            callback_url: 'http://10.0.0.1/hook',
            dry_run: true,
          }),
        });
        expect(json(literal).data.message).toStartWith('callback_url: points to a private address');
      });
    });

    describe('tasks', () => {
      test('an Idempotency-Key replay after completion answers the task as it is now, charged once', async () => {
        const { key } = await createAccount(gw, uniqueEmail('idem'), 1);
        const body = {
          model: 'sandbox/image',
          input: { prompt: 'replay', width: 64, height: 64, delay_ms: 0, max_sequential_images: 3 },
        };
        const headers = { 'idempotency-key': `idem-${crypto.randomUUID()}` };
        const first = await api(gw, 'POST', '/v1/tasks', { key, body, headers });
        expect(first.status).toBe(200);
        expect(first.body.data).toEqual({ task_id: expect.any(String), status: 'processing' });
        expect(first.headers.get('idempotent-replayed')).toBeNull();
        const [done] = await settledTasks(gw, key, 1);
        expect(done.status).toBe('completed');
        const replay = await api(gw, 'POST', '/v1/tasks', { key, body, headers });
        expect(replay.status).toBe(200);
        expect(replay.headers.get('idempotent-replayed')).toBe('true');
        expect(replay.body.data).toMatchObject({
          task_id: first.body.data.task_id,
          status: 'completed',
          cost: 0.02,
          output: done.output,
        });
        expect(replay.body.data.output).not.toBeNull();
        // Ceiling 0.03 charged, 0.01 refunded at completion; the replay charged nothing.
        expect(await balanceOf(gw, key)).toBeCloseTo(0.98, 10);
        const other = await api(gw, 'POST', '/v1/tasks', {
          key,
          body: { ...body, input: { ...body.input, prompt: 'another' } },
          headers,
        });
        expect(other.status).toBe(422);
        expect(other.body.data.message).toStartWith('Idempotency-Key');
        expect((await allTasks(gw, key)).length).toBe(1);
      }, 60_000);

      // Needs direct SQL to plant a task stored under older rules: defined in the Postgres mode only (not skipped elsewhere).
      if (mode.name === 'postgres+redis')
        test('a replay is not re-validated against today’s rules', async () => {
          // A task stored under a key when its input was acceptable (here: a prompt longer than today's maximum).
          const { key, userId } = await createAccount(gw, uniqueEmail('idem-old'), 1);
          const body = { model: 'sandbox/image', input: { prompt: 'x'.repeat(40_000) } };
          const idem = `old-${crypto.randomUUID()}`;
          const taskId = crypto.randomUUID();
          await queryDatabase(
            databaseUrl as string,
            `insert into tasks (id, account_id, model, provider, category, status, input, output, cost_usd, idempotency_key, request_hash, finished_at)
           values ($1, $2, 'sandbox/image', 'sandbox', 'image', 'completed', $3, $4, 0.01, $5, $6, now())`,
            [
              taskId,
              userId,
              JSON.stringify(body.input),
              JSON.stringify({ images: ['http://example.com/x.png'] }),
              idem,
              requestHash({ model: body.model, input: body.input }),
            ],
          );
          const replay = await api(gw, 'POST', '/v1/tasks', { key, body, headers: { 'idempotency-key': idem } });
          expect(replay.status).toBe(200);
          expect(replay.body.data).toMatchObject({ task_id: taskId, status: 'completed', cost: 0.01 });
          const fresh = await api(gw, 'POST', '/v1/tasks', {
            key,
            body,
            headers: { 'idempotency-key': `new-${idem}` },
          });
          expect(fresh.status).toBe(422);
        });

      test('created_after and created_before are whole seconds, both inclusive', async () => {
        const { key } = await createAccount(gw, uniqueEmail('range'), 1);
        const created = await api(gw, 'POST', '/v1/tasks', {
          key,
          body: { model: 'sandbox/image', input: { prompt: 'when', width: 64, height: 64, delay_ms: 0 } },
        });
        expect(created.status).toBe(200);
        const one = await api(gw, 'GET', `/v1/tasks/${created.body.data.task_id}`, { key });
        const at = one.body.data.created_at as number;
        const found = await api(gw, 'GET', `/v1/tasks?created_after=${at}&created_before=${at}`, { key });
        expect(found.body.data.map((t: any) => t.task_id)).toEqual([created.body.data.task_id]);
        expect((await api(gw, 'GET', `/v1/tasks?created_before=${at - 1}`, { key })).body.data).toEqual([]);
        expect((await api(gw, 'GET', `/v1/tasks?created_after=${at + 1}`, { key })).body.data).toEqual([]);
        expect(
          (await api(gw, 'GET', '/v1/tasks?created_after=0&created_before=253402300799', { key })).body.data,
        ).toHaveLength(1);
        expect((await api(gw, 'GET', '/v1/tasks?created_before=253402300800', { key })).status).toBe(422);
      });
    });

    describe('every route under hostile traffic', () => {
      test('no 5xx, 4xx in each endpoint’s own shape, and another account’s tasks and LLM calls go on, billed exactly', async () => {
        const until = { done: false };
        const victimRun = victimTraffic(victim, until);
        const violations: string[] = [];
        let count = 0;
        try {
          const jobs: Array<() => Promise<Sent>> = [];
          for (const route of routes()) {
            const auth = route.auth;
            const path = fillPath(route.path, ids);
            const body = route.body ? toJson(validBody(route, ids)) : undefined;
            for (const target of pathVariants(route, ids))
              jobs.push(() => send(attacker, route.method, target, { auth, body }));
            for (const name of [...(route.query ?? []), 'x', '%00', '%ff']) {
              for (const value of HOSTILE_QUERY_VALUES)
                jobs.push(() => send(attacker, route.method, `${path}?${name}=${value}`, { auth, body }));
            }
            jobs.push(() => send(attacker, route.method, `${path}?page=1&page=2&model=a&model=%00`, { auth, body }));
            const webhook = route.path.startsWith('/upstream-webhooks');
            for (const variant of bodyVariants(route, ids)) {
              jobs.push(() =>
                send(attacker, route.method, webhook ? `${path}?task=${ids.task}` : path, {
                  auth,
                  body: variant,
                  headers: webhook ? signedWebhook(variant) : undefined,
                }),
              );
            }
          }
          // Headers a client controls.
          for (const value of ['\xff', 'a b', 'x'.repeat(300), '%00']) {
            jobs.push(() =>
              send(attacker, 'POST', '/v1/tasks', {
                auth: 'key',
                body: toJson({ model: 'sandbox/image', input: { prompt: 'h', width: 64, height: 64, delay_ms: 0 } }),
                headers: { 'idempotency-key': value },
              }),
            );
          }
          for (const range of [
            'bytes=99999999999999999999-',
            'bytes=-0',
            'bytes=1-0',
            'bytes=0-1,2-3',
            'bytes=\xff',
            'items=0-1',
          ]) {
            jobs.push(() => send(attacker, 'GET', `/files/${ids.file}`, { headers: { range } }));
            jobs.push(() =>
              send(attacker, 'GET', `/files/${ids.file}`, {
                headers: { range, 'if-range': '"\xff"', 'if-none-match': '\xff' },
              }),
            );
          }
          for (const cookie of [
            'gw_session=%00',
            'gw_session=\xff',
            `gw_session=${'a'.repeat(4000)}`,
            'gw_session=',
            'gw_session="\\"',
          ]) {
            jobs.push(() => send(attacker, 'GET', '/v1/account', { headers: { cookie } }));
            jobs.push(() =>
              send(attacker, 'POST', '/v1/tasks', { headers: { cookie, 'x-csrf-token': '\xff' }, body: '{}' }),
            );
            jobs.push(() => send(attacker, 'GET', '/dashboard/api/session', { headers: { cookie } }));
          }
          for (const type of [
            'text/plain',
            'application/json; charset=utf-16',
            'multipart/form-data',
            'multipart/form-data; boundary=',
            'application/x-www-form-urlencoded',
            '\xff/\xff',
          ]) {
            for (const target of [
              '/v1/tasks',
              '/v1/chat/completions',
              '/v1/messages',
              '/dashboard/api/session',
              '/admin/accounts',
            ]) {
              jobs.push(() =>
                send(attacker, 'POST', target, {
                  auth: authFor(target),
                  body: 'a=%00&b=\u0000',
                  headers: { 'content-type': type },
                }),
              );
            }
          }
          jobs.push(() =>
            send(attacker, 'POST', '/v1/chat/completions', {
              auth: 'key',
              body: '{"model":"sandbox/echo"}',
              headers: { 'content-encoding': 'gzip' },
            }),
          );
          // Uploads: multipart with hostile names and bytes, base64 and URL variants.
          const multipart = (name: string, filename: string) =>
            `--X\r\ncontent-disposition: form-data; name="${name}"; filename="${filename}"\r\ncontent-type: image/png\r\n\r\nABC\r\n--X--\r\n`;
          for (const [name, filename] of [
            ['file', '\u0000.png'],
            ['\u0000', 'a.png'],
            ['file', '\ud800'],
            ['file', 'x'.repeat(10_000)],
          ] as const) {
            jobs.push(() =>
              send(attacker, 'PUT', '/upload', {
                auth: 'key',
                body: multipart(name, filename),
                headers: { 'content-type': 'multipart/form-data; boundary=X' },
              }),
            );
          }
          jobs.push(() =>
            send(attacker, 'PUT', '/upload', {
              auth: 'key',
              body: new Uint8Array([0xff, 0xfe, 0x00, 0xd8]),
              headers: { 'content-type': 'multipart/form-data; boundary=X' },
            }),
          );
          for (const body of [
            { base64: 'data:image/png;base64,\u0000' },
            { base64: '\ud800' },
            { file_url: 'http://localhost:1/\u0000' },
            { file_url: 'http://\u0000/' },
            { base64: 'QUJD', file_url: 'http://127.0.0.1:1/' },
          ]) {
            jobs.push(() => send(attacker, 'PUT', '/upload', { auth: 'key', body: JSON.stringify(body) }));
          }

          const run = await pool(16, jobs);
          count += run.count;
          violations.push(...run.violations);

          // Then at random: any route, hostile JSON built by fast-check (NUL, surrogates, any code unit), hostile segments and query values.
          const all = routes();
          const hostileString = fc.oneof(
            fc.string({ unit: 'binary', maxLength: 12 }),
            fc.constantFrom('\u0000', '\ud800', '\udc00', 'a\u0000'),
          );
          const encoded = hostileString.map((s) => encodeURIComponent(s.toWellFormed()));
          const jsonish = fc.jsonValue({ maxDepth: 4, stringUnit: 'binary' });
          const arbRequest = fc.record({
            route: fc.constantFrom(...all),
            segment: fc.option(fc.oneof(fc.constantFrom(...HOSTILE_SEGMENTS), encoded), { nil: undefined }),
            query: fc.option(
              fc.tuple(
                fc.oneof(
                  fc.constantFrom('page', 'model', 'created_after', 'days', 'size', 'language', 'category', 'task'),
                  encoded,
                ),
                fc.oneof(fc.constantFrom(...HOSTILE_QUERY_VALUES), encoded),
              ),
              { nil: undefined },
            ),
            mutation: fc.option(
              fc.tuple(fc.nat(), fc.oneof(jsonish, hostileString, fc.constantFrom(...HOSTILE_VALUES))),
              { nil: undefined },
            ),
            extraKey: fc.option(fc.tuple(hostileString, jsonish), { nil: undefined }),
          });
          let random = 0;
          await fc.assert(
            fc.asyncProperty(arbRequest, async (r) => {
              let target = fillPath(r.route.path, ids);
              if (r.segment !== undefined) {
                const parts = target.split('/');
                parts[1 + (r.segment.length % Math.max(1, parts.length - 1))] = r.segment;
                target = parts.join('/');
              }
              if (r.query) target += `?${r.query[0]}=${r.query[1]}`;
              let body: string | undefined;
              let value = validBody(r.route, ids);
              if (value !== undefined) {
                if (r.mutation) {
                  const leaves = leafPaths(value);
                  value = setAt(value, leaves[r.mutation[0] % leaves.length] ?? [], r.mutation[1]);
                }
                if (r.extraKey && value && typeof value === 'object' && !Array.isArray(value))
                  value = { ...(value as object), [r.extraKey[0]]: r.extraKey[1] };
                body = toJson(value);
              }
              const sent = await send(attacker, r.route.method, target, { auth: r.route.auth, body });
              random++;
              const why = violation(sent);
              if (why) violations.push(describeSent(sent, why));
              return true;
            }),
            { numRuns: mode.name === 'embedded' ? 500 : 1500 },
          );
          count += random;
        } finally {
          until.done = true;
        }
        const victimLog = await victimRun;

        // The gateway never failed: no 5xx, no hang, every refusal in its endpoint's shape, nothing logged as an error.
        expect(count).toBeGreaterThan(5000);
        expect(dedupe(violations)).toEqual([]);
        expect([...new Set(loggedErrors(gw.output()))]).toEqual([]);

        // The other account went on, and was billed exactly what its tasks and calls cost.
        expect(victimLog.failures).toEqual([]);
        expect(victimLog.tasks).toBeGreaterThan(5);
        expect(victimLog.chats).toBeGreaterThan(5);
        const tasks = await settledTasks(gw, victim.key, victimLog.tasks + victimLog.chats);
        expect(tasks.filter((t) => t.category === 'image')).toHaveLength(victimLog.tasks);
        expect(tasks.filter((t) => t.category === 'llm')).toHaveLength(victimLog.chats);
        expect(tasks.filter((t) => t.status !== 'completed')).toEqual([]);
        const spent = tasks.reduce((sum, t) => sum + t.cost, 0);
        expect(VICTIM_BALANCE - (await balanceOf(gw, victim.key))).toBeCloseTo(spent, 9);
      }, 600_000);
    });

    describe('bodies: parser limits and the usage recorder (being changed by other work)', () => {
      test('20,000 levels of nesting on every JSON route are refused with a 4xx', async () => {
        for (const target of [
          '/v1/tasks',
          '/v1/chat/completions',
          '/v1/responses',
          '/v1/messages',
          '/admin/accounts',
          '/dashboard/api/session',
          '/v1/resources/sandbox/voices',
          '/sandbox-image/generate',
          '/v1/account/webhook-signing',
        ]) {
          for (const body of [nest(20_000, 'array'), nest(20_000, 'object')]) {
            const sent = await send(attacker, 'POST', target, { auth: authFor(target), body });
            expect({ target, violation: violation(sent) }).toEqual({ target, violation: undefined });
            expect({ target, refused: sent.status >= 400 && sent.status < 500 }).toEqual({ target, refused: true });
          }
        }
      });

      test('oversize bodies are refused with a 4xx on every body route', async () => {
        const big = `{"model":"sandbox/echo","messages":[{"role":"user","content":"${'x'.repeat(40 * MB)}"}]}`;
        for (const target of [
          '/v1/tasks',
          '/v1/chat/completions',
          '/v1/responses',
          '/v1/messages',
          '/admin/accounts',
          '/dashboard/api/session',
        ]) {
          const sent = await send(attacker, 'POST', target, { auth: authFor(target), body: big, timeoutMs: 60_000 });
          expect({ target, violation: violation(sent) }).toEqual({ target, violation: undefined });
          expect({ target, refused: sent.status >= 400 && sent.status < 500 }).toEqual({ target, refused: true });
        }
      }, 120_000);

      test('a slow body does not hold up anyone else and is not answered with a 5xx', async () => {
        const encoder = new TextEncoder();
        let stop = false;
        const slow = new ReadableStream<Uint8Array>({
          async pull(controller) {
            if (stop) return controller.close();
            await Bun.sleep(200);
            controller.enqueue(encoder.encode(' '));
          },
        });
        const pending = fetch(`${gw.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${attacker.key}`, 'content-type': 'application/json' },
          body: slow,
          signal: AbortSignal.timeout(45_000),
        }).then(
          async (res) => ({ status: res.status, body: await res.text() }),
          (err: Error) => ({ status: 0, body: err.message }),
        );
        // Others are served meanwhile.
        for (let i = 0; i < 5; i++) {
          const sent = await send(victim, 'POST', '/v1/chat/completions', {
            auth: 'key',
            body: JSON.stringify({ model: 'sandbox/echo', messages: [{ role: 'user', content: 'meanwhile' }] }),
          });
          expect(sent.status).toBe(200);
        }
        const answer = await pending;
        stop = true;
        // The gateway gave up on the body at its deadline with a 408, and closed the connection.
        expect(answer.status).toBe(408);
      }, 60_000);

      test('LLM calls with NUL and lone surrogates in their messages are answered and billed', async () => {
        const { key } = await createAccount(gw, uniqueEmail('llm-nul'), 1);
        const calls = [
          {
            path: '/v1/chat/completions',
            body: { model: 'sandbox/echo', messages: [{ role: 'user', content: 'a\u0000b' }] },
          },
          {
            path: '/v1/chat/completions',
            body: { model: 'sandbox/echo', messages: [{ role: 'user', content: 'x\ud800' }], stream: true },
          },
          { path: '/v1/responses', body: { model: 'sandbox/echo', input: 'a\u0000b' } },
          {
            path: '/v1/messages',
            body: { model: 'sandbox/echo', max_tokens: 16, messages: [{ role: 'user', content: '\udc00\u0000' }] },
          },
        ];
        for (const call of calls) {
          const sent = await send({ gw, key }, 'POST', call.path, {
            auth: authFor(call.path),
            body: JSON.stringify(call.body),
          });
          expect({ path: call.path, status: sent.status }).toEqual({ path: call.path, status: 200 });
        }
        const tasks = await settledTasks(gw, key, calls.length, 10_000);
        expect(tasks).toHaveLength(calls.length);
        const spent = tasks.reduce((sum, t) => sum + t.cost, 0);
        expect(spent).toBeGreaterThan(0);
        expect(1 - (await balanceOf(gw, key))).toBeCloseTo(spent, 9);
      }, 30_000);
    });
  });
}
