import { asObject, type Json } from '../common/validation.ts';

/**
 * A same-format answer keeps the upstream's response id, and the call's record keeps that id too.
 * Some OpenAI-compatible servers answer with no id, or an empty one: passed through as written,
 * the client would see none while the decoder minted one for the record. Such an answer gets the
 * minted id (the one its task records) where the upstream left it out, and nothing else changes;
 * an answer with an id of its own is never touched.
 */

/** Whether a response id is missing: absent, empty, or not a string (the SDKs type it as a string). */
export const lacksId = (value: unknown): boolean => typeof value !== 'string' || value === '';

/** `obj` with `id` first (where OpenAI and Anthropic write it), or in place of the empty one it had. */
export function withId(obj: Json, id: string): Json {
  const out: Json = { id, ...obj };
  out.id = id;
  return out;
}

/**
 * A whole non-streamed body (chat completion, Anthropic message) with its top-level id set to `id`
 * when it has none; the same text otherwise. `id` is the decoder's: the upstream's own when it
 * sent one, so the usual body is recognised by its text and not parsed again. `text` is valid JSON.
 */
export function bodyWithId(text: string, id: string): string {
  if (text.includes(`"id":${JSON.stringify(id)}`)) return text;
  const body = asObject(JSON.parse(text));
  if (!body || !lacksId(body.id)) return text;
  return JSON.stringify(withId(body, id));
}
