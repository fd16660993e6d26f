import { InvalidRequestError } from '../../translators/canonical/index.ts';
import type { ClientFormat } from './client-format.ts';
import { LlmError } from './llm-error.ts';

/** `decode()`, its refusals (InvalidRequestError) answered in the client's format, naming the field. */
export function refusedInFormat<T>(format: Pick<ClientFormat, 'family'>, decode: () => T): T {
  try {
    return decode();
  } catch (err) {
    if (err instanceof InvalidRequestError)
      throw new LlmError(format.family, 'invalid_request', err.message, err.param ?? null);
    throw err;
  }
}
