/**
 * What every stream decoder and encoder here is: a synchronous state machine that takes one input
 * at a time and answers with the outputs it completes. `push` may answer nothing (an input that
 * only buffers) or several; `end` is called once, when the input is over, and answers what the
 * end completes — the blocks still open closed, or the format's error for a stream that ended
 * before its finish. After a translator has answered its own terminal output (a finish, an
 * error), later pushes answer nothing.
 *
 * The gateway's hot path calls `push` directly inside one pull loop per client (decoder → tap →
 * encoder for each upstream event), with no promise or queue per hop; `toTransformStream` is for
 * callers that want web streams.
 */
export interface StreamTranslator<I, O> {
  push(input: I): O[];
  end(): O[];
}

/** Any StreamTranslator as a web `TransformStream`: `source.pipeThrough(toTransformStream(translator))`. */
export function toTransformStream<I, O>(translator: StreamTranslator<I, O>): TransformStream<I, O> {
  return new TransformStream<I, O>({
    transform(input, controller) {
      for (const output of translator.push(input)) controller.enqueue(output);
    },
    flush(controller) {
      for (const output of translator.end()) controller.enqueue(output);
    },
  });
}
