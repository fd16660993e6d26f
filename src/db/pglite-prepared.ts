import { parse, protocol, type PGlite } from '@electric-sql/pglite';
import type { Compiled, RunPrepared } from './prepared.ts';

/**
 * Named prepared statements on PGlite, as node-postgres gives them on Postgres (prepared.ts): the
 * money statements' CTEs cost about 3.7 ms each to parse and plan in PGlite's WebAssembly
 * Postgres, about 1.1 ms once prepared (bench/README.md, "Embedded default"). PGlite's own
 * `query` always uses the unnamed statement, so this speaks the extended protocol itself: Parse +
 * Describe once per name, then Bind + Describe + Execute + Sync in one message per call.
 *
 * `exclusive` must hold the dialect's only connection for the call (pglite-dialect.ts), so a
 * statement never runs inside another caller's open transaction.
 */
export function pglitePrepared(pg: PGlite, exclusive: <T>(work: () => Promise<T>) => Promise<T>): RunPrepared {
  const paramTypes = new Map<string, number[]>();
  const { serialize } = protocol;
  const toText = (value: unknown, type: number | undefined): string | null => {
    if (value === null || value === undefined) return null;
    const serializer = type === undefined ? undefined : pg.serializers[type];
    // The same mapping as PGlite's own query(): the type's serializer, else the value as text.
    return serializer ? (serializer(value) as string) : String(value);
  };
  return <R>(name: string, query: Compiled) =>
    exclusive(async () => {
      let types = paramTypes.get(name);
      if (!types) {
        const described = await pg.execProtocol(
          join([serialize.parse({ name, text: query.sql }), serialize.describe({ type: 'S', name }), serialize.sync()]),
        );
        types = parse.parseDescribeStatementResults(described.messages);
        paramTypes.set(name, types);
      }
      const values = query.parameters.map((v, i) => toText(v, types[i]));
      const result = await pg.execProtocol(
        join([
          serialize.bind({ statement: name, values }),
          serialize.describe({ type: 'P' }),
          serialize.execute({}),
          serialize.sync(),
        ]),
      );
      return (parse.parseResults(result.messages, pg.parsers)[0]?.rows ?? []) as R[];
    });
}

function join(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}
