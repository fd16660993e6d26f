import * as v from 'valibot';
import { InvalidRequestError } from '../canonical/errors.ts';

/** `messages[2].content[0].image_url` from a base path and valibot's path keys. Shared by every wire format's request decoder. */
export function joinPath(base: string, keys: ReadonlyArray<unknown>): string {
  let out = base;
  for (const key of keys) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out ? `.${String(key)}` : String(key);
  }
  return out;
}

/** A missing value reads "is required" (JSON has no undefined); anything else keeps the schema's own message. */
function describe(issue: v.BaseIssue<unknown>): string {
  return issue.received === 'undefined' ? 'is required' : issue.message;
}

/**
 * Validates `input` against `schema`, or throws InvalidRequestError naming the field (`base`
 * plus the issue's path) with a `field: reason` message.
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

export type Json = Record<string, unknown>;

/** True for a plain JSON object. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A plain JSON object, or undefined. */
export const asObject = (value: unknown): Json | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : undefined;

export const asString = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

export const asNumber = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) ? value : undefined;

/** True when the field is present with a value (JSON `null` counts as absent). */
export const isSet = (value: unknown): boolean => value !== undefined && value !== null;

export const text = () => v.string('must be a string');
export const str = (what = 'must be a string') => v.string(what);
export const nullishString = () => v.nullish(v.string('must be a string'));
export const nonEmptyText = () => v.pipe(v.string('must be a string'), v.nonEmpty('must not be empty'));
export const nullishBoolean = () => v.nullish(v.boolean('must be a boolean'));
export const positiveInteger = () =>
  v.pipe(v.number('must be an integer'), v.integer('must be an integer'), v.minValue(1, 'must be at least 1'));
export const numberBetween = (min: number, max: number) =>
  v.pipe(
    v.number('must be a number'),
    v.minValue(min, `must be between ${min} and ${max}`),
    v.maxValue(max, `must be between ${min} and ${max}`),
  );
