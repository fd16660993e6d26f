import { ConfigError } from '../config/config-error.ts';
import type { ModelConfig, ProviderConfig } from '../config/config-schema.ts';
import type { MediaKind } from '../types.ts';
import { configuredMedia, type ConfiguredMedia } from './config-media-model.ts';
import { kindOf } from './media-outputs.ts';
import { msOption, pollSchedule, type PollSchedule } from './poll-schedule.ts';

const DEFAULT_DEADLINE_MS = 30 * 60_000;

/** What every start/poll adapter (replicate, fal, …) reads from a model's config entry. */
export interface AsyncJobSettings {
  media: ConfiguredMedia;
  kind: MediaKind;
  /** Where the outputs sit in the upstream's result, when not at the top. */
  outputField?: string;
  schedule: PollSchedule;
  deadlineMs: number;
}

/**
 * The shared part of an async adapter's model settings: input schema and price, output kind
 * and field, poll schedule and deadline — model options win over the provider's. Bad values
 * stop start-up naming `models[<id>].options.<key>`.
 */
export function asyncJobSettings(config: ModelConfig, provider: ProviderConfig): AsyncJobSettings {
  const path = `models[${config.id}]`;
  const options = config.options ?? {};
  if (options.output_field !== undefined && typeof options.output_field !== 'string')
    throw new ConfigError(`${path}.options.output_field: expected a field path`);
  const layers = [
    { options: provider.options, path: `providers[${provider.id}].options` },
    { options, path: `${path}.options` },
  ];
  return {
    media: configuredMedia(config),
    kind: kindOf(config.category),
    outputField: options.output_field as string | undefined,
    schedule: pollSchedule(layers),
    deadlineMs: msOption('deadline_ms', layers) ?? DEFAULT_DEADLINE_MS,
  };
}
