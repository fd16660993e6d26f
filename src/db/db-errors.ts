/**
 * Whether a failed write failed for its data (retrying the same rows can never succeed) or for
 * the database's sake (connection lost, server restarting: retry later).
 *
 * @see https://www.postgresql.org/docs/current/errcodes-appendix.html
 */
const POISON_CLASSES = new Set([
  '22', // data exception: NUL in text (22P05), bad JSON/Unicode escape (22P02), out of range…
  '23', // integrity constraint violation
  '54', // program limit exceeded: nesting too deep for jsonb (54001), row too big
]);

/** Postgres's SQLSTATE for a unique index refusing a row. */
export const UNIQUE_VIOLATION = '23505';

/** The SQLSTATE of a server error: node-postgres and PGlite put it in `code`, Bun's client in `errno`. */
export function sqlState(err: unknown): string | undefined {
  const { code, errno } = (err as { code?: unknown; errno?: unknown } | null) ?? {};
  for (const value of [code, errno]) if (typeof value === 'string' && /^[0-9A-Z]{5}$/.test(value)) return value;
  return undefined;
}

export function isPoisonError(err: unknown): boolean {
  const state = sqlState(err);
  if (state) return POISON_CLASSES.has(state.slice(0, 2));
  // Our own serialization of the rows failed (a value JSON cannot hold): no retry will help.
  return err instanceof RangeError || err instanceof TypeError;
}

/**
 * The pause before try `attempt` + 1 of a write that failed for the database's sake: doubling
 * from 200 ms, at most 5 s, so a database that comes back is used within seconds.
 */
export function pauseBeforeRetry(attempt: number): Promise<void> {
  return Bun.sleep(Math.min(5_000, 100 * 2 ** attempt));
}
