import type { Compiled, RunPrepared } from './prepared.ts';

/**
 * The hot statements of the Postgres mode (the settlement, the lease growth: prepared.ts) on Bun's
 * own Postgres client (`Bun.SQL`), beside node-postgres for everything else. Its wire protocol is
 * native code: under load a call costs about 5 % less CPU than through `pg`, whose protocol parser
 * and `node:net` socket run in JavaScript on the request thread (bench/README.md). Bun prepares
 * every query with parameters once per connection and reuses it by its text, so the statement's
 * name is not needed here; the plan is cached by Postgres as with a named `pg` statement.
 *
 * Two differences from `pg` the callers rely on being handled:
 * - A string parameter whose inferred type is `json`/`jsonb` is sent JSON-encoded (a JSON string
 *   scalar, not the document): statements cast such a parameter from text (`$1::text::jsonb`).
 * - A server error's SQLSTATE is in `errno` (`code` is Bun's own, e.g. `ERR_POSTGRES_SERVER_ERROR`):
 *   db-errors.ts reads either.
 * @see https://bun.com/docs/runtime/sql
 */
export function bunSqlPrepared(databaseUrl: string, max: number): { prepared: RunPrepared; close(): Promise<void> } {
  const client = new Bun.SQL(databaseUrl, { max });
  const prepared: RunPrepared = async <R>(_name: string, query: Compiled) =>
    (await client.unsafe(query.sql, [...query.parameters])) as R[];
  return { prepared, close: () => client.close() };
}
