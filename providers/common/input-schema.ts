import * as v from 'valibot';
import { ConfigError } from '../config/config-error.ts';

/**
 * A tiny schema language for config files, compiled to valibot. A model's `options.input` names
 * each input field the gateway checks before a task reaches the upstream:
 *
 *   input:
 *     prompt:       { type: string, required: true, max_length: 4000 }
 *     num_outputs:  { type: integer, min: 1, max: 4, default: 1 }
 *     aspect_ratio: { type: string, enum: ['1:1', '16:9'] }
 *
 * Fields the config does not name pass through untouched unless `strict_input: true`. A string
 * field without `max_length` takes at most DEFAULT_MAX_STRING_LENGTH characters.
 */
export const FIELD_TYPES = ['string', 'number', 'integer', 'boolean', 'array', 'object'] as const;

/**
 * A string field without `max_length` takes at most this many characters: room for any real
 * prompt or text, while a 20 MB "prompt" is a 422 instead of a stored, charged task.
 */
export const DEFAULT_MAX_STRING_LENGTH = 32_000;

/** A client string of at most `max` characters (default DEFAULT_MAX_STRING_LENGTH), with the usual messages. */
export function boundedString(max = DEFAULT_MAX_STRING_LENGTH) {
  return v.pipe(v.string('must be a string'), v.maxLength(max, `must be at most ${max} characters`));
}
export type FieldType = (typeof FIELD_TYPES)[number];

export interface FieldSpec {
  type: FieldType;
  required?: boolean;
  default?: unknown;
  description?: string;
  /** number, integer */
  min?: number;
  max?: number;
  /** string */
  min_length?: number;
  max_length?: number;
  pattern?: string;
  /** string, number, integer */
  enum?: (string | number)[];
  /** array */
  min_items?: number;
  max_items?: number;
  items?: Omit<FieldSpec, 'required' | 'default'>;
}

const SETTINGS: Record<FieldType, readonly string[]> = {
  string: ['min_length', 'max_length', 'pattern', 'enum'],
  number: ['min', 'max', 'enum'],
  integer: ['min', 'max', 'enum'],
  boolean: [],
  array: ['min_items', 'max_items', 'items'],
  object: [],
};
const COMMON = ['type', 'required', 'default', 'description'];

type AnySchema = v.GenericSchema<unknown, unknown>;

function fail(path: string, message: string): never {
  throw new ConfigError(`${path}: ${message}`);
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function count(spec: Record<string, unknown>, key: string, path: string, integer: boolean): number | undefined {
  const value = spec[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || (integer && (!Number.isInteger(value) || value < 0))) {
    fail(`${path}.${key}`, integer ? 'expected a non-negative integer' : 'expected a number');
  }
  return value;
}

/** One field's valibot schema, without optionality; `path` names the field in the config. */
function fieldSchema(spec: unknown, path: string): AnySchema {
  if (!isRecord(spec)) fail(path, 'expected a field description such as {type: string}');
  const type = spec.type;
  if (typeof type !== 'string' || !(FIELD_TYPES as readonly string[]).includes(type)) {
    fail(`${path}.type`, `expected one of ${FIELD_TYPES.join(', ')}, got ${JSON.stringify(type)}`);
  }
  const t = type as FieldType;
  for (const key of Object.keys(spec)) {
    if (!COMMON.includes(key) && !SETTINGS[t].includes(key)) fail(`${path}.${key}`, `unknown setting for a ${t} field`);
  }
  if (spec.required !== undefined && typeof spec.required !== 'boolean')
    fail(`${path}.required`, 'expected true or false');
  // biome-ignore lint/suspicious/noExplicitAny: valibot's pipe items are typed per schema; this list mixes them
  const pipe: v.PipeItem<any, any, v.BaseIssue<unknown>>[] = [];
  let base: AnySchema;
  switch (t) {
    case 'string': {
      base = v.string('must be a string');
      const min = count(spec, 'min_length', path, true);
      const max = count(spec, 'max_length', path, true);
      if (min !== undefined)
        pipe.push(min === 1 ? v.nonEmpty('must not be empty') : v.minLength(min, `must be at least ${min} characters`));
      const limit = max ?? DEFAULT_MAX_STRING_LENGTH;
      pipe.push(v.maxLength(limit, `must be at most ${limit} characters`));
      if (spec.pattern !== undefined) {
        if (typeof spec.pattern !== 'string') fail(`${path}.pattern`, 'expected a regular expression');
        let re: RegExp;
        try {
          re = new RegExp(spec.pattern);
        } catch (err) {
          fail(`${path}.pattern`, (err as Error).message);
        }
        pipe.push(v.regex(re, `must match ${spec.pattern}`));
      }
      break;
    }
    case 'number':
    case 'integer': {
      base = v.number('must be a number');
      if (t === 'integer') pipe.push(v.integer('must be an integer'));
      const min = count(spec, 'min', path, false);
      const max = count(spec, 'max', path, false);
      if (min !== undefined) pipe.push(v.minValue(min, `must be at least ${min}`));
      if (max !== undefined) pipe.push(v.maxValue(max, `must be at most ${max}`));
      break;
    }
    case 'boolean':
      base = v.boolean('must be a boolean');
      break;
    case 'array': {
      const items = spec.items === undefined ? v.unknown() : fieldSchema(spec.items, `${path}.items`);
      if (isRecord(spec.items) && ('required' in spec.items || 'default' in spec.items))
        fail(`${path}.items`, 'items take neither required nor default');
      base = v.array(items, 'must be an array');
      const min = count(spec, 'min_items', path, true);
      const max = count(spec, 'max_items', path, true);
      if (min !== undefined) pipe.push(v.minLength(min, `must have at least ${min} items`));
      if (max !== undefined) pipe.push(v.maxLength(max, `must have at most ${max} items`));
      break;
    }
    case 'object':
      // A plain JSON object: valibot's record would also take (and reshape) an array.
      base = v.unknown();
      pipe.push(v.check(isRecord, 'must be an object'));
      break;
    default: {
      const exhaustive: never = t;
      throw new Error(`unknown field type ${String(exhaustive)}`);
    }
  }
  if (spec.enum !== undefined) {
    const options = spec.enum;
    const expected = t === 'string' ? 'string' : 'number';
    if (!Array.isArray(options) || options.length === 0 || !options.every((o) => typeof o === expected)) {
      fail(`${path}.enum`, `expected a non-empty list of ${expected}s`);
    }
    pipe.push(
      v.check(
        (value) => (options as unknown[]).includes(value),
        `must be one of ${options.map((o) => JSON.stringify(o)).join(', ')}`,
      ),
    );
  }
  return pipe.length ? (v.pipe(base, ...(pipe as [])) as AnySchema) : base;
}

/**
 * Compiles `options.input` (undefined → the permissive default `{prompt?: string, …}`). `path`
 * is where the schema sits in the config, e.g. `models[3].options.input`; every problem is a
 * ConfigError naming the exact setting.
 */
export function compileInputSchema(
  given: unknown,
  opts: { strict?: boolean; path: string },
): v.GenericSchema<unknown, Record<string, unknown>> {
  const spec = given === undefined ? { prompt: { type: 'string' } } : given;
  if (!isRecord(spec)) fail(opts.path, 'expected a map of field name → {type, …}');
  const entries: Record<string, AnySchema> = {};
  for (const [name, field] of Object.entries(spec)) {
    const path = `${opts.path}.${name}`;
    const schema = fieldSchema(field, path);
    const f = field as Record<string, unknown>;
    if (f.default !== undefined) {
      const checked = v.safeParse(schema, f.default);
      if (!checked.success) fail(`${path}.default`, `the default ${checked.issues[0]?.message ?? 'is invalid'}`);
      if (f.required === true) fail(`${path}.default`, 'a required field takes no default');
      entries[name] = v.optional(schema, f.default as never);
    } else {
      entries[name] = f.required === true ? schema : v.optional(schema);
    }
  }
  const object = v.looseObject(entries, 'must be an object');
  if (!opts.strict) return object as unknown as v.GenericSchema<unknown, Record<string, unknown>>;
  return v.pipe(object, rejectUnknown(new Set(Object.keys(entries)))) as unknown as v.GenericSchema<
    unknown,
    Record<string, unknown>
  >;
}

/** `strict_input`: a field the config does not name is a 422 naming that field. */
function rejectUnknown(known: ReadonlySet<string>) {
  return v.rawCheck<Record<string, unknown>>(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    for (const [key, value] of Object.entries(dataset.value)) {
      if (known.has(key)) continue;
      addIssue({
        message: 'is not an accepted field',
        path: [{ type: 'object', origin: 'value', input: dataset.value, key, value }],
      });
    }
  });
}
