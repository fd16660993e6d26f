/**
 * Runs a synchronous `Transformer` (every stream translator here is one) without a stream around
 * it. The gateway's hot path chains decoder → tap → encoder for each SSE event inside one pull
 * loop this way, instead of paying a promise and a queue per web-stream hop; tests and other
 * callers keep using the `TransformStream` wrappers.
 */
export interface SyncTransformer<I, O> {
  push(chunk: I): O[];
  end(): O[];
}

export function runSync<I, O>(transformer: Transformer<I, O>): SyncTransformer<I, O> {
  let out: O[] = [];
  const controller: TransformStreamDefaultController<O> = {
    desiredSize: 1,
    enqueue: (chunk?: O) => {
      if (chunk !== undefined) out.push(chunk);
    },
    error: (reason?: unknown) => {
      throw reason;
    },
    terminate: () => undefined,
  };
  const call = (fn: (() => void | PromiseLike<void>) | undefined): O[] => {
    out = [];
    if (fn && fn() instanceof Promise) throw new Error('runSync needs a synchronous transformer');
    return out;
  };
  return {
    push: (chunk) => call(transformer.transform && (() => transformer.transform?.(chunk, controller))),
    end: () => call(transformer.flush && (() => transformer.flush?.(controller))),
  };
}
