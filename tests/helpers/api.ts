import { expect } from 'bun:test';
import { ADMIN_TOKEN, type GatewayProcess } from './gateway-process.ts';

export interface ApiResult<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

/** A small JSON client for tests: returns status, headers and parsed body. */
export async function api<T = any>(
  gw: GatewayProcess | string,
  method: string,
  path: string,
  opts: { key?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<ApiResult<T>> {
  const base = typeof gw === 'string' ? gw : gw.url;
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.key) headers.authorization = `Bearer ${opts.key}`;
  let body: string | undefined;
  if (opts.rawBody !== undefined) {
    body = opts.rawBody;
    headers['content-type'] ??= 'application/json';
  } else if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['content-type'] = 'application/json';
  }
  const res = await fetch(`${base}${path}`, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // leave as text
  }
  return { status: res.status, headers: res.headers, body: parsed as T };
}

export async function createAccount(
  gw: GatewayProcess,
  email: string,
  balanceUsd = 10,
): Promise<{ userId: number; key: string }> {
  const res = await api(gw, 'POST', '/admin/accounts', { key: ADMIN_TOKEN, body: { email, balance_usd: balanceUsd } });
  if (res.status !== 200) throw new Error(`create account failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { userId: res.body.data.user_id, key: res.body.data.api_key };
}

let counter = 0;
export const uniqueEmail = (label = 'user') => `${label}-${Date.now()}-${counter++}@example.com`;

/**
 * Rate limits use fixed windows aligned to the minute: a test counting requests against one
 * must not straddle a boundary, so it starts with at least `seconds` left in the window.
 */
export async function awayFromMinuteBoundary(seconds = 15): Promise<void> {
  const left = 60 - (Date.now() % 60_000) / 1000;
  if (left < seconds) await Bun.sleep(left * 1000 + 50);
}

/**
 * Waits (up to 5 s) for the account of `key` to hold `expected` USD — calls settle after their
 * answers — then asserts it to `digits` decimals.
 */
export async function expectBalance(gw: GatewayProcess, key: string, expected: number, digits = 12): Promise<void> {
  const balance = async () => (await api(gw, 'GET', '/v1/account', { key })).body?.data?.balance_usd;
  const deadline = Date.now() + 5_000;
  let b = await balance();
  while (!(typeof b === 'number' && Math.abs(b - expected) < 10 ** -digits) && Date.now() < deadline) {
    await Bun.sleep(50);
    b = await balance();
  }
  expect(b).toBeCloseTo(expected, digits);
}

/**
 * `calls` LLM calls of the account of `key`, each charged `perCallUsd` from a balance that started
 * at `startUsd`: the settled balance, as many tasks, each with that cost and, when given, those
 * built-in tool calls in its usage.
 */
export async function expectCallsCharged(
  gw: GatewayProcess,
  key: string,
  charged: { startUsd: number; calls: number; perCallUsd: number; builtInToolCalls?: Record<string, number> },
): Promise<void> {
  await expectBalance(gw, key, charged.startUsd - charged.calls * charged.perCallUsd);
  const tasks = await api(gw, 'GET', '/v1/tasks?category=llm&page_size=100', { key });
  expect(tasks.body.data).toHaveLength(charged.calls);
  for (const task of tasks.body.data) {
    expect(task.cost).toBeCloseTo(charged.perCallUsd, 12);
    if (charged.builtInToolCalls) expect(task.output.usage.built_in_tool_calls).toEqual(charged.builtInToolCalls);
  }
}
