import type { TranslationWarning } from '../canonical/warnings.ts';
import { ignoredSetting } from '../shared/request-fields.ts';
import { isSet, type Json } from '../shared/validation.ts';

/**
 * A passed-through `body` without the top-level `fields` the gateway keeps for itself; each one
 * set to something (not null or false, its defaults, which pass quietly as the translation's do)
 * is told in `warnings`. `body` itself when it has none of them.
 */
export function withoutSettings(body: Json, fields: readonly string[], warnings: TranslationWarning[]): Json {
  let value = body;
  for (const field of fields) {
    if (!(field in value)) continue;
    if (isSet(value[field]) && value[field] !== false) warnings.push(ignoredSetting(field));
    const { [field]: _withheld, ...rest } = value;
    value = rest;
  }
  return value;
}
