import { parse, protocol, type PGlite } from '@electric-sql/pglite';

/**
 * Named prepared statements on PGlite, as node-postgres gives them on Postgres (prepared.ts): the
 * money statements' CTEs cost about 3.7 ms each to parse and plan in PGlite's WebAssembly
 * Postgres, about 1.1 ms once prepared (bench/README.md, "Embedded default"). PGlite's own
 * `query` always uses the unnamed statement, so this speaks the extended protocol itself: Parse +
 * Describe once per name, then Bind + Describe + Execute + Sync in one message per call.
 *
 * Runs in the database's worker (pglite-worker.ts), which the main thread reaches only through
 * the dialect's one connection, so a statement never runs inside another caller's transaction.
 */
export function pglitePrepared(pg: PGlite): (name: string, sql: string, params: unknown[]) => Promise<unknown[]> {
  const paramTypes = new Map<string, number[]>();
  const { serialize } = protocol;
  const toText = (value: unknown, type: number | undefined): string | null => {
    if (value === null || value === undefined) return null;
    const serializer = type === undefined ? undefined : pg.serializers[type];
    // The same mapping as PGlite's own query(): the type's serializer, else the value as text.
    return serializer ? (serializer(value) as string) : String(value);
  };
  return (name, sql, params) =>
    pg.runExclusive(async () => {
      let types = paramTypes.get(name);
      if (!types) {
        const described = await pg.execProtocol(
          join([serialize.parse({ name, text: sql }), serialize.describe({ type: 'S', name }), serialize.sync()]),
        );
        types = parse.parseDescribeStatementResults(described.messages);
        paramTypes.set(name, types);
      }
      const values = params.map((v, i) => toText(v, types[i]));
      const result = await pg.execProtocol(
        join([
          serialize.bind({ statement: name, values }),
          serialize.describe({ type: 'P' }),
          serialize.execute({}),
          serialize.sync(),
        ]),
      );
      return parse.parseResults(result.messages, pg.parsers)[0]?.rows ?? [];
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
