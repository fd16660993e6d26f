/**
 * The headers every answer of one kind carries, in one place. A stream's: never cached, kept
 * alive, and not buffered by a reverse proxy in front (nginx holds a proxied body back unless
 * told `x-accel-buffering: no`, which would turn a token stream into bursts).
 */
export const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
} as const;

export const JSON_HEADERS = { 'content-type': 'application/json;charset=utf-8' } as const;
