import type * as v from 'valibot';
import { ConfigError } from '../config/config-error.ts';
import type { ModelConfig } from '../config/config-schema.ts';
import type { MediaOutput } from '../types.ts';
import { compileInputSchema } from './input-schema.ts';
import { charCount, numberField, priceOf, type PriceBasis } from './media-pricing.ts';

/**
 * The config-driven half of a media model, shared by every upstream adapter: the input schema,
 * the price rule and the client → upstream input mapping, all read from the model's entry in
 * `GATEWAY_CONFIG`. Recognised `options`:
 *
 * - `input`: field descriptions (providers/common/input-schema.ts); unset → `{prompt?: string, …}`
 * - `strict_input`: reject fields `input` does not name (default false: they pass through)
 * - `input_map`: `{clientField: upstreamField}` renames on the way upstream
 * - `count_field`: input field holding the number of images (per_image; default 1)
 * - `duration_field` / `default_seconds`: seconds of output (per_second)
 * - `text_field`: input field whose characters are billed (per_1k_chars; default `text`, then `prompt`)
 */
export interface ConfiguredMedia {
  schema: v.GenericSchema<unknown, Record<string, unknown>>;
  /** USD at creation; for per_image the ceiling (count field, or 1). */
  price(input: Record<string, unknown>): number;
  /** USD once done: per_image counts the outputs actually produced (up to the ceiling). */
  finalPrice(input: Record<string, unknown>, outputs: MediaOutput[]): number;
  /** The upstream's input: renames per `input_map`, everything else as is, undefined dropped. */
  upstreamInput(input: Record<string, unknown>): Record<string, unknown>;
}

interface MediaOptions {
  input?: unknown;
  strict_input?: boolean;
  input_map?: Record<string, string>;
  count_field?: string;
  duration_field?: string;
  default_seconds?: number;
  text_field?: string;
}

const STRING_OPTIONS = ['count_field', 'duration_field', 'text_field'] as const;

/**
 * Checks the shared media options of one model (adapter-specific options are left alone) and
 * returns them typed. `path` names the options in the config file, e.g. `models[3].options`.
 */
export function checkMediaOptions(options: Record<string, unknown> | undefined, path: string): MediaOptions {
  const o = options ?? {};
  for (const key of STRING_OPTIONS) {
    if (o[key] !== undefined && (typeof o[key] !== 'string' || o[key] === ''))
      throw new ConfigError(`${path}.${key}: expected a field name`);
  }
  if (o.strict_input !== undefined && typeof o.strict_input !== 'boolean')
    throw new ConfigError(`${path}.strict_input: expected true or false`);
  if (o.default_seconds !== undefined && !(typeof o.default_seconds === 'number' && o.default_seconds >= 0)) {
    throw new ConfigError(`${path}.default_seconds: expected a non-negative number`);
  }
  if (o.input_map !== undefined) {
    const map = o.input_map;
    if (typeof map !== 'object' || map === null || Array.isArray(map))
      throw new ConfigError(`${path}.input_map: expected a map of client field → upstream field`);
    for (const [from, to] of Object.entries(map)) {
      if (typeof to !== 'string' || to === '')
        throw new ConfigError(`${path}.input_map.${from}: expected an upstream field name`);
    }
  }
  // Compiling is the check: a bad field type or setting throws a ConfigError naming it.
  compileInputSchema(o.input, { strict: o.strict_input === true, path: `${path}.input` });
  return o as MediaOptions;
}

export function configuredMedia(model: ModelConfig): ConfiguredMedia {
  const options = checkMediaOptions(model.options, `models[${model.id}].options`);
  const schema = compileInputSchema(options.input, {
    strict: options.strict_input === true,
    path: `models[${model.id}].options.input`,
  });
  const pricing = model.pricing;
  const map = options.input_map ?? {};
  const targets = new Set(Object.values(map));

  const basis = (input: Record<string, unknown>): PriceBasis => ({
    images: Math.max(0, Math.ceil((options.count_field ? numberField(input[options.count_field]) : undefined) ?? 1)),
    seconds:
      (options.duration_field ? numberField(input[options.duration_field]) : undefined) ?? options.default_seconds ?? 0,
    chars: charCount(input[options.text_field ?? ''] ?? input.text ?? input.prompt),
  });

  const price = (input: Record<string, unknown>) => priceOf(pricing, basis(input));
  return {
    schema,
    price,
    finalPrice(input, outputs) {
      if (pricing?.per_image === undefined) return price(input);
      const b = basis(input);
      return priceOf(pricing, { ...b, images: Math.min(b.images, outputs.length) });
    },
    upstreamInput(input) {
      const out: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(input)) {
        if (value === undefined) continue;
        if (Object.hasOwn(map, key)) out[map[key] as string] = value;
        // A field named as a mapping's target is what the mapped field becomes upstream: sent as
        // well, it would overwrite it (or stand in for it when absent), and the upstream would do
        // what the client was not priced for (`text` priced, a long `input` spoken).
        else if (!targets.has(key)) out[key] = value;
      }
      return out;
    },
  };
}
