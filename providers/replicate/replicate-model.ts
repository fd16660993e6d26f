import { ConfigError } from '../config/config-error.ts';
import type { ModelConfig, ProviderConfig } from '../config/config-schema.ts';
import { asyncJobSettings } from '../common/async-job-settings.ts';
import { nextPollMs } from '../common/poll-schedule.ts';
import { queuedMediaModel } from '../common/queued-media-model.ts';
import { stepForOperationError } from '../common/upstream-step.ts';
import type { JobStep, MediaJob, MediaModel } from '../types.ts';
import { parseTarget, type ReplicateApi } from './replicate-api.ts';
import { finishedStep, isPrediction, TERMINAL, type Prediction } from './replicate-prediction.ts';
import type { ReplicateSettings } from './replicate-settings.ts';

/** What the task row keeps of a Replicate job between steps. */
interface ReplicateOperation {
  /** The prediction; absent while creating it waits out a 429. */
  id?: string;
  started_at: number;
  polls: number;
  /** Consecutive 429 answers, for the backoff when Replicate names no `Retry-After`. */
  limited?: number;
  /** The finished prediction from Replicate's webhook, stored by the webhook route. */
  webhook?: Prediction;
}

function asOperation(value: unknown): ReplicateOperation | undefined {
  const op = value as ReplicateOperation | null;
  if (typeof op !== 'object' || op === null || typeof op.started_at !== 'number') return undefined;
  return { ...op, polls: typeof op.polls === 'number' ? op.polls : 0 };
}

/**
 * A catalog model run as Replicate predictions: `upstream_model` is `owner/name` (an official
 * model, or with `options.deployment: true` a deployment) or a version (`owner/name:<id>` or the
 * bare 64-hex id). Input, schema and price come from the config (providers/common/config-media-model.ts);
 * `options.output_field` picks one key of an object output.
 */
export function replicateModel(
  config: ModelConfig,
  provider: ProviderConfig,
  settings: ReplicateSettings,
  api: ReplicateApi,
): MediaModel | undefined {
  if (config.category === 'llm') return undefined;
  const path = `models[${config.id}]`;
  const options = config.options ?? {};
  if (!config.upstream_model)
    throw new ConfigError(`${path}.upstream_model: replicate needs owner/name or a version id`);
  if (options.deployment !== undefined && typeof options.deployment !== 'boolean')
    throw new ConfigError(`${path}.options.deployment: expected true or false`);
  const target = parseTarget(config.upstream_model, options.deployment === true);
  if (!target)
    throw new ConfigError(
      `${path}.upstream_model: expected owner/name, owner/name:<version> or a version id, got "${config.upstream_model}"`,
    );

  const { media, kind, outputField, schedule, deadlineMs } = asyncJobSettings(config, provider);
  const webhook = settings.webhookUrl !== undefined;

  const running = (op: ReplicateOperation): JobStep => ({
    state: 'running',
    operation: op,
    pollAfterMs: nextPollMs(schedule, op.polls, {
      webhook: webhook && op.id !== undefined,
      startedAt: op.started_at,
      deadlineMs,
    }),
  });

  const submit = async (job: MediaJob, op: ReplicateOperation): Promise<JobStep> => {
    let prediction: Prediction;
    try {
      const callback = settings.webhookUrl
        ? `${settings.webhookUrl}?task=${encodeURIComponent(job.taskId)}`
        : undefined;
      prediction = await api.create(target, media.upstreamInput(job.input), callback, job.signal);
    } catch (err) {
      return stepForOperationError(err, 'replicate', op);
    }
    return (
      finishedStep(prediction, kind, outputField) ?? running({ id: prediction.id, started_at: op.started_at, polls: 0 })
    );
  };

  return queuedMediaModel({
    label: 'replicate',
    media,
    deadlineMs,
    parse: asOperation,
    submit,
    async poll(job, op) {
      if (op.id === undefined) return submit(job, op);
      // Replicate's webhook already told us how it ended: no need to ask.
      if (isPrediction(op.webhook) && op.webhook.id === op.id && TERMINAL.has(op.webhook.status)) {
        const step = finishedStep(op.webhook, kind, outputField);
        if (step) return step;
      }
      let prediction: Prediction;
      try {
        prediction = await api.get(op.id, job.signal);
      } catch (err) {
        return stepForOperationError(err, 'replicate', op);
      }
      return (
        finishedStep(prediction, kind, outputField) ??
        running({ id: op.id, started_at: op.started_at, polls: op.polls + 1 })
      );
    },
    async cancel(job, op) {
      if (op.id) await api.cancel(op.id, job.signal);
    },
  });
}
