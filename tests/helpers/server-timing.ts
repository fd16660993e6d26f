/**
 * The gateway's `Server-Timing` (docs/observability.md) as name → milliseconds, in the header's
 * order. Strict: an entry that is not `name;dur=<number>` throws, since the gateway never sends one.
 */
export function parseServerTiming(value: string): Record<string, number> {
  const parts: Record<string, number> = {};
  for (const entry of value.split(',')) {
    const match = /^\s*([\w-]+);dur=(\d+(?:\.\d+)?)\s*$/.exec(entry);
    if (!match) throw new Error(`not a Server-Timing entry with a duration: ${JSON.stringify(entry)}`);
    parts[match[1] as string] = Number(match[2]);
  }
  return parts;
}

/** A response's `Server-Timing`, which it must carry. */
export function serverTimingOf(headers: Headers): Record<string, number> {
  const value = headers.get('server-timing');
  if (value === null) throw new Error('the answer has no Server-Timing header');
  return parseServerTiming(value);
}
