/**
 * `bun run admin <command>`: the admin API from a terminal.
 *
 *   bun run admin create <email> [balance_usd]
 *   bun run admin topup <user_id> <amount_usd> [idempotency_key]
 *   bun run admin show <user_id>
 *   bun run admin keys <user_id>
 *   bun run admin key-create <user_id> <name> ['{"budget_usd":5,"budget_period":"month",...}']
 *   bun run admin key-update <user_id> <key_id> '{"rpm":60,"models":["openai/*"]}'
 *   bun run admin key-revoke <user_id> <key_id>
 *
 * Talks HTTP to a running gateway: GATEWAY_URL (default PUBLIC_URL or http://127.0.0.1:8080)
 * with ADMIN_TOKEN, so it works the same against one instance or a fleet.
 */
const USAGE = `usage:
  bun run admin create <email> [balance_usd]
  bun run admin topup <user_id> <amount_usd> [idempotency_key]
  bun run admin show <user_id>
  bun run admin keys <user_id>
  bun run admin key-create <user_id> <name> [settings JSON]
  bun run admin key-update <user_id> <key_id> <settings JSON>
  bun run admin key-revoke <user_id> <key_id>
topup: sent with an Idempotency-Key (the one given, or a fresh one) and retried with it when the
  gateway cannot be reached, so it credits once; give the key to repeat a top-up safely later
settings JSON: budget_usd, budget_period (day|week|month|null), models, rpm, tpm, expires_at (docs/keys.md)
environment: ADMIN_TOKEN (required), GATEWAY_URL (default PUBLIC_URL, else http://127.0.0.1:8080)`;

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(2);
}

/** An id as plain decimal digits: `Number('0x10')` and `Number('2e0')` would name another account. */
function id(value: string | undefined, what: string): string {
  if (value === undefined || !/^\d+$/.test(value)) fail(`${what} must be a whole number of decimal digits\n${USAGE}`);
  return value;
}

/** An amount as a plain decimal (`12`, `0.5`): no hex, binary or exponent a typo could turn into another sum. */
function amount(value: string | undefined, what: string): number {
  if (value === undefined || !/^\d+(\.\d+)?$/.test(value))
    fail(`${what} must be a decimal number such as 10 or 2.50\n${USAGE}`);
  return Number(value);
}

/** A settings object given as JSON text; the gateway validates its fields (422 naming them). */
function settings(text: string | undefined, required: boolean): Record<string, unknown> {
  if (text === undefined) {
    if (required) fail(`settings JSON is required\n${USAGE}`);
    return {};
  }
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // reported below
  }
  fail(`settings must be a JSON object, e.g. '{"budget_usd":5}'\n${USAGE}`);
}

/** `idempotencyKey`: sent as `Idempotency-Key`, and the request is then retried (twice, 1 s apart) when the gateway cannot be reached. */
async function call(method: string, path: string, body?: unknown, idempotencyKey?: string): Promise<void> {
  const token = process.env.ADMIN_TOKEN;
  if (!token) fail(`ADMIN_TOKEN is not set\n${USAGE}`);
  const base = (
    process.env.GATEWAY_URL ??
    process.env.PUBLIC_URL ??
    `http://127.0.0.1:${process.env.PORT ?? 8080}`
  ).replace(/\/+$/, '');
  const send = () =>
    fetch(`${base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body ? { 'content-type': 'application/json' } : {}),
        ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
      },
      body: body ? JSON.stringify(body) : undefined,
    });
  let res: Response | undefined;
  for (let attempt = 1; !res; attempt++) {
    try {
      res = await send();
    } catch (err) {
      if (!idempotencyKey || attempt === 3) fail(`cannot reach the gateway at ${base}: ${(err as Error).message}`);
      await Bun.sleep(1000);
    }
  }
  const text = await res.text();
  let parsed: { data?: unknown } | undefined;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: print as is
  }
  if (!res.ok) fail(`error ${res.status}: ${parsed ? JSON.stringify(parsed.data ?? parsed) : text}`);
  process.stdout.write(`${JSON.stringify(parsed?.data ?? text, null, 2)}\n`);
}

const [command, ...args] = process.argv.slice(2);
switch (command) {
  case 'create': {
    if (!args[0]) fail(USAGE);
    await call('POST', '/admin/accounts', {
      email: args[0],
      ...(args[1] ? { balance_usd: amount(args[1], 'balance_usd') } : {}),
    });
    break;
  }
  case 'topup':
    await call(
      'POST',
      `/admin/accounts/${id(args[0], 'user_id')}/topup`,
      { amount_usd: amount(args[1], 'amount_usd') },
      args[2] ?? `cli-${crypto.randomUUID()}`,
    );
    break;
  case 'show':
    await call('GET', `/admin/accounts/${id(args[0], 'user_id')}`);
    break;
  case 'keys':
    await call('GET', `/admin/accounts/${id(args[0], 'user_id')}/keys`);
    break;
  case 'key-create':
    if (!args[1]) fail(USAGE);
    await call('POST', `/admin/accounts/${id(args[0], 'user_id')}/keys`, {
      ...settings(args[2], false),
      name: args[1],
    });
    break;
  case 'key-update':
    await call(
      'PATCH',
      `/admin/accounts/${id(args[0], 'user_id')}/keys/${id(args[1], 'key_id')}`,
      settings(args[2], true),
    );
    break;
  case 'key-revoke':
    await call('DELETE', `/admin/accounts/${id(args[0], 'user_id')}/keys/${id(args[1], 'key_id')}`);
    break;
  default:
    fail(USAGE);
}

// A module, so top-level await is allowed under `tsc`.
export {};
