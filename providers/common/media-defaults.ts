import { ConfigError } from '../config/config-error.ts';
import type { ModelConfig } from '../config/config-schema.ts';

/** The shared media options (providers/common/config-media-model.ts) an adapter may default. */
export interface MediaOptionDefaults {
  input?: Record<string, unknown>;
  input_map?: Record<string, string>;
  count_field?: string;
  text_field?: string;
}

/**
 * The model's config with the adapter's defaults filled in where the config says nothing: a
 * config that declares its own `input` (or map, or field) replaces that default entirely.
 */
export function withMediaDefaults(model: ModelConfig, defaults: MediaOptionDefaults): ModelConfig {
  const options: Record<string, unknown> = { ...model.options };
  for (const [key, value] of Object.entries(defaults)) {
    if (options[key] === undefined && value !== undefined) options[key] = value;
  }
  return { ...model, options };
}

/** `options.deadline_ms`: how long the task may keep retrying an unavailable upstream. */
export function deadlineOption(model: ModelConfig): number | undefined {
  const value = model.options?.deadline_ms;
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1000) {
    throw new ConfigError(`models[${model.id}].options.deadline_ms: expected an integer of at least 1000`);
  }
  return value;
}
