import { InvalidRequestError } from '../canonical/errors.ts';
import type { TranslationWarning } from '../canonical/warnings.ts';
import { asObject, invalid, isSet, type Json } from './validation.ts';

/**
 * What every request decoder does with the top-level fields it cannot translate: a field whose
 * loss would change the answer is refused (400 naming it), one the gateway can do without is
 * dropped with a warning. Which values count as "set" differs by field and format, so callers may
 * pass their own test (the default: present and not null).
 */

/** The request body as a JSON object, or an InvalidRequestError. */
export function requestObject(body: unknown): Json {
  const obj = asObject(body);
  if (!obj) throw new InvalidRequestError('request body: must be a JSON object');
  return obj;
}

/** Refuses the first field of `refused` that `body` sets, with that field's reason. */
export function refuseFields(
  body: Json,
  refused: Readonly<Record<string, string>>,
  present: (value: unknown) => boolean = isSet,
): void {
  // Every request runs this: a key loop, not an entries array of pairs each time.
  for (const field in refused) {
    if (present(body[field])) invalid(field, refused[field] as string);
  }
}

/** The warning for a setting the gateway does not support and leaves out. */
export const ignoredSetting = (field: string): TranslationWarning => ({
  type: 'unsupported-setting',
  field,
  message: `${field} is not supported and was ignored`,
});

/** Warns about each field of `dropped` that `body` sets. */
export function dropFields(
  body: Json,
  dropped: readonly string[],
  warnings: TranslationWarning[],
  present: (value: unknown) => boolean = isSet,
): void {
  for (const field of dropped) {
    if (present(body[field])) warnings.push(ignoredSetting(field));
  }
}

/**
 * Warns about each top-level field `body` sets that the format's decoder does not know at all
 * (a setting of another format, a server-specific extra such as `top_k` on chat completions):
 * the gateway cannot pass it on, and saying nothing would hide that it was ignored.
 */
export function warnUnknownFields(body: Json, known: ReadonlySet<string>, warnings: TranslationWarning[]): void {
  for (const field of Object.keys(body)) {
    if (known.has(field) || !isSet(body[field])) continue;
    warnings.push({
      type: 'unsupported-setting',
      field,
      message: `${field} is not a setting of this endpoint and was ignored`,
    });
  }
}

/** The field names a decoder handles: its schema's keys and its own lists. */
export const knownFields = (...lists: ReadonlyArray<readonly string[]>): ReadonlySet<string> => new Set(lists.flat());
