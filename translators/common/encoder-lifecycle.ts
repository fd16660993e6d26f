import type { StreamEvent } from '../canonical/stream.ts';
import type { StreamTranslator } from './stream-translator.ts';

/**
 * A client-format stream encoder from its per-event step and its format's truncation error. A
 * canonical stream ends with one `finish` or one `error`: once the step has encoded either, later
 * events are ignored, and an input that ends before either answers `truncated()`, so a stream cut
 * short never looks finished to the client.
 */
export function encoderLifecycle(
  encode: (event: StreamEvent) => string[],
  truncated: () => string[],
): StreamTranslator<StreamEvent, string> {
  let over = false;
  return {
    push(event) {
      if (over) return [];
      if (event.type === 'finish' || event.type === 'error') over = true;
      return encode(event);
    },
    end() {
      if (over) return [];
      over = true;
      return truncated();
    },
  };
}
