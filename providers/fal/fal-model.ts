import { ConfigError } from '../config/config-error.ts';
import type { ModelConfig, ProviderConfig } from '../config/config-schema.ts';
import { asyncJobSettings } from '../common/async-job-settings.ts';
import { nextPollMs } from '../common/poll-schedule.ts';
import { queuedMediaModel } from '../common/queued-media-model.ts';
import { stepForOperationError } from '../common/upstream-step.ts';
import type { JobStep, MediaJob, MediaModel } from '../types.ts';
import type { FalQueue, FalRequestUrls, FalStatus, FalSubmitted } from './fal-queue.ts';
import { falOutputs } from './fal-result.ts';

/** What the task row keeps of a fal job between steps. */
interface FalOperation {
  /** Absent while submitting waits out a 429. */
  request_id?: string;
  urls?: FalRequestUrls;
  started_at: number;
  polls: number;
  limited?: number;
}

function asOperation(value: unknown): FalOperation | undefined {
  const op = value as FalOperation | null;
  if (typeof op !== 'object' || op === null || typeof op.started_at !== 'number') return undefined;
  return { ...op, polls: typeof op.polls === 'number' ? op.polls : 0 };
}

function errorText(error: unknown): string {
  if (typeof error === 'string' && error.trim()) return error.trim();
  if (error && typeof error === 'object') {
    const detail =
      (error as { detail?: unknown; message?: unknown }).detail ?? (error as { message?: unknown }).message;
    if (typeof detail === 'string') return detail;
    return JSON.stringify(error);
  }
  return 'the request failed';
}

/**
 * A catalog model run through fal's queue: `upstream_model` is the fal model id
 * (`fal-ai/flux/dev`). Completion by polling the status URL with backoff (fal webhooks are not
 * used). Input, schema and price come from the config; `options.output_field` picks the files.
 * @see https://docs.fal.ai/model-endpoints/queue
 */
export function falModel(config: ModelConfig, provider: ProviderConfig, queue: FalQueue): MediaModel | undefined {
  if (config.category === 'llm') return undefined;
  const path = `models[${config.id}]`;
  const modelId = config.upstream_model;
  if (!modelId || !/^[A-Za-z0-9._-]+\/[A-Za-z0-9._/-]+$/.test(modelId))
    throw new ConfigError(`${path}.upstream_model: fal needs the model id, e.g. fal-ai/flux/dev`);
  const { media, kind, outputField, schedule, deadlineMs } = asyncJobSettings(config, provider);

  const running = (op: FalOperation): JobStep => ({
    state: 'running',
    operation: op,
    pollAfterMs: nextPollMs(schedule, op.polls, { webhook: false, startedAt: op.started_at, deadlineMs }),
  });

  const submit = async (job: MediaJob, op: FalOperation): Promise<JobStep> => {
    let submitted: FalSubmitted;
    try {
      submitted = await queue.submit(modelId, media.upstreamInput(job.input), job.signal);
    } catch (err) {
      return stepForOperationError(err, 'fal', op);
    }
    return running({
      request_id: submitted.request_id,
      urls: queue.urlsFor(modelId, submitted),
      started_at: op.started_at,
      polls: 0,
    });
  };

  const completed = async (job: MediaJob, urls: FalRequestUrls, status: FalStatus): Promise<JobStep> => {
    if (status.error !== undefined && status.error !== null) {
      return {
        state: 'failed',
        message: `fal: ${errorText(status.error)}`,
        detail: { error_type: status.error_type ?? null },
      };
    }
    const result = await queue.result(urls, job.signal);
    if (!result.ok)
      return {
        state: 'failed',
        message: `fal: ${result.message}`,
        detail: { upstream_status: result.status, error_type: result.errorType ?? null },
      };
    const outputs = falOutputs(result.output, kind, outputField);
    if (outputs.length === 0) return { state: 'failed', message: 'fal: the request completed without a file output' };
    return { state: 'succeeded', outputs };
  };

  return queuedMediaModel({
    label: 'fal',
    media,
    deadlineMs,
    parse: asOperation,
    submit,
    async poll(job, op) {
      if (!op.request_id || !op.urls) return submit(job, op);
      try {
        const status = await queue.status(op.urls, job.signal);
        if (status.status === 'COMPLETED') return await completed(job, op.urls, status);
      } catch (err) {
        return stepForOperationError(err, 'fal', op);
      }
      return running({ ...op, polls: op.polls + 1, limited: 0 });
    },
    async cancel(job, op) {
      if (op.urls) await queue.cancel(op.urls, job.signal);
    },
  });
}
