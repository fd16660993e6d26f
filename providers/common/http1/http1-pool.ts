import { Http1Connection, type Origin } from './http1-connection.ts';

/** Idle connections kept per origin; past it the oldest is closed. */
const MAX_IDLE_PER_ORIGIN = 128;

const idle = new Map<string, Http1Connection[]>();

function forget(connection: Http1Connection) {
  const list = idle.get(connection.origin.key);
  const at = list?.indexOf(connection) ?? -1;
  if (list && at >= 0) list.splice(at, 1);
}

function keep(connection: Http1Connection) {
  const list = idle.get(connection.origin.key) ?? [];
  if (list.length === 0) idle.set(connection.origin.key, list);
  list.push(connection);
  if (list.length > MAX_IDLE_PER_ORIGIN) list.shift()?.destroy();
  // Neither the timer nor the idle socket keeps a process alive that has nothing else to do.
  connection.idleTimer = setTimeout(() => connection.destroy(), connection.keepAliveMs);
  connection.idleTimer.unref();
}

/**
 * A connection to `origin` ready for a request: the most recently used idle one (its TCP window
 * and TLS state warmest), or a new one (given up past `timeoutMs`). Idle ones the server closed have left the pool already.
 */
export async function acquire(origin: Origin, signal?: AbortSignal, timeoutMs?: number): Promise<Http1Connection> {
  const list = idle.get(origin.key);
  for (let connection = list?.pop(); connection; connection = list?.pop()) {
    clearTimeout(connection.idleTimer);
    if (connection.closed) continue;
    connection.take();
    return connection;
  }
  const connection = await Http1Connection.connect(origin, signal, timeoutMs);
  connection.onIdle = keep;
  connection.onClose = forget;
  return connection;
}

/** Idle connections per origin, for tests and diagnostics. */
export function idleConnectionCount(originKey: string): number {
  return idle.get(originKey)?.length ?? 0;
}
