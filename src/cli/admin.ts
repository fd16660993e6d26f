/**
 * `bun run admin <command>`: the admin API from a terminal.
 *
 *   bun run admin create <email> [balance_usd]
 *   bun run admin topup <user_id> <amount_usd>
 *   bun run admin show <user_id>
 *
 * Talks HTTP to a running gateway: GATEWAY_URL (default PUBLIC_URL or http://127.0.0.1:8080)
 * with ADMIN_TOKEN, so it works the same against one instance or a fleet.
 */
const USAGE = `usage:
  bun run admin create <email> [balance_usd]
  bun run admin topup <user_id> <amount_usd>
  bun run admin show <user_id>
environment: ADMIN_TOKEN (required), GATEWAY_URL (default http://127.0.0.1:8080)`;

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(2);
}

function number(value: string | undefined, what: string): number {
  const n = Number(value);
  if (value === undefined || value.trim() === '' || !Number.isFinite(n)) fail(`${what} must be a number\n${USAGE}`);
  return n;
}

async function call(method: string, path: string, body?: unknown): Promise<void> {
  const token = process.env.ADMIN_TOKEN;
  if (!token) fail(`ADMIN_TOKEN is not set\n${USAGE}`);
  const base = (
    process.env.GATEWAY_URL ??
    process.env.PUBLIC_URL ??
    `http://127.0.0.1:${process.env.PORT ?? 8080}`
  ).replace(/\/+$/, '');
  let res: Response;
  try {
    res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
  } catch (err) {
    fail(`cannot reach the gateway at ${base}: ${(err as Error).message}`);
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
      ...(args[1] ? { balance_usd: number(args[1], 'balance_usd') } : {}),
    });
    break;
  }
  case 'topup':
    await call('POST', `/admin/accounts/${number(args[0], 'user_id')}/topup`, {
      amount_usd: number(args[1], 'amount_usd'),
    });
    break;
  case 'show':
    await call('GET', `/admin/accounts/${number(args[0], 'user_id')}`);
    break;
  default:
    fail(USAGE);
}

// A module, so top-level await is allowed under `tsc`.
export {};
