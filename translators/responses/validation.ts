import * as v from 'valibot';
import { InvalidRequestError } from '../canonical/errors.ts';

/** `input[2].content[0].image_url` from a base path and valibot's path keys. */
export function joinPath(base: string, keys: ReadonlyArray<unknown>): string {
  let out = base;
  for (const key of keys) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out ? `.${String(key)}` : String(key);
  }
  return out;
}

/** A helpful sentence for one valibot issue; missing keys read "is required". */
function describe(issue: v.BaseIssue<unknown>): string {
  const missingKey = (issue.type === 'object' || issue.type === 'loose_object') && issue.received === 'undefined' && issue.path?.length;
  return missingKey ? 'is required' : issue.message;
}

/**
 * Validates `input` against `schema` or throws InvalidRequestError naming the field
 * (`base` plus the issue's path) with a human-readable message.
 */
export function parseAt<const S extends v.GenericSchema>(schema: S, input: unknown, base: string): v.InferOutput<S> {
  const result = v.safeParse(schema, input);
  if (result.success) return result.output;
  const issue = result.issues[0];
  const param = joinPath(base, issue.path?.map((item) => item.key) ?? []);
  if (!param) throw new InvalidRequestError(`request body: ${issue.message}`);
  throw new InvalidRequestError(`${param}: ${describe(issue)}`, param);
}

/** Throws InvalidRequestError for `param` with the usual `param: message` text. */
export function invalid(param: string, message: string): never {
  throw new InvalidRequestError(`${param}: ${message}`, param);
}

/** True for a plain JSON object. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export const str = (what = 'must be a string') => v.string(what);
export const nullishString = () => v.nullish(v.string('must be a string'));
export const nullishBoolean = () => v.nullish(v.boolean('must be a boolean'));
export const numberBetween = (min: number, max: number) =>
  v.pipe(
    v.number('must be a number'),
    v.minValue(min, `must be between ${min} and ${max}`),
    v.maxValue(max, `must be between ${min} and ${max}`),
  );
