import { CompiledQuery } from 'kysely';
import type { Db } from './database.ts';

/** A compiled query (`sql` with `$n` placeholders and its parameters), e.g. `sql\`…\`.compile(db)`. */
export interface Compiled {
  sql: string;
  parameters: readonly unknown[];
}

/**
 * Runs a hot statement as a named prepared statement: Postgres parses it once per connection and,
 * after a few runs, keeps its plan, where an unnamed query is parsed and planned on every call
 * (a millisecond for the money statements' CTEs; several on embedded PGlite: pglite-prepared.ts).
 */
export type RunPrepared = <R>(name: string, query: Compiled) => Promise<R[]>;

export function runUnprepared(db: Db): RunPrepared {
  return async <R>(_name: string, query: Compiled) =>
    (await db.executeQuery<R>(CompiledQuery.raw(query.sql, [...query.parameters]))).rows;
}
