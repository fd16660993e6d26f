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
  for (const [field, message] of Object.entries(refused)) {
    if (present(body[field])) invalid(field, message);
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
