import type { TranslationWarning } from '../canonical/warnings.ts';
import { dropFields } from '../common/request-fields.ts';
import { isSet, type Json } from '../common/validation.ts';

/**
 * A passed-through `body` without the top-level `fields` the gateway keeps for itself; each one
 * set to something (not null or false, its defaults, which pass quietly as the translation's do)
 * is told in `warnings`, as the translation's dropped fields are. `body` itself when it has none
 * of them.
 */
export function withoutSettings(body: Json, fields: readonly string[], warnings: TranslationWarning[]): Json {
  dropFields(body, fields, warnings, (value) => isSet(value) && value !== false);
  if (!fields.some((field) => field in body)) return body;
  return Object.fromEntries(Object.entries(body).filter(([key]) => !fields.includes(key)));
}
