import type { ConfiguredMedia } from './config-media-model.ts';
import { stepForUpstreamError } from './upstream-step.ts';
import type { JobStep, MediaJob, MediaModel, MediaOutput } from '../types.ts';

/** How long a synchronous media task may keep retrying an unavailable upstream before it fails. */
export const SYNC_DEADLINE_MS = 10 * 60_000;

/** The only operation a synchronous model stores: "rate limited, call again" (and how often so far). */
interface RateLimited {
  rate_limited: number;
}

const isRateLimited = (op: unknown): op is RateLimited => typeof (op as RateLimited | null)?.rate_limited === 'number';

/**
 * A media model whose upstream answers in the same HTTP call (OpenAI images and speech,
 * ElevenLabs TTS). It still runs as a task through the durable queue: `start` makes the call and
 * finishes the job at once. What a failure means is shared with the async adapters
 * (providers/common/upstream-step.ts): a refusal (4xx) fails the task with the upstream's message;
 * a 429 that outlived the in-call retries waits for its `Retry-After` on the task's own schedule
 * (a `running` step whose poll calls again); anything transient is thrown, so the runner retries
 * the step until the model's deadline.
 */
export function syncMediaModel(def: {
  /** Names the upstream in failure messages (the provider id). */
  label: string;
  configured: ConfiguredMedia;
  /** Calls the upstream and returns what it made. */
  run(job: MediaJob): Promise<MediaOutput[]>;
  deadlineMs?: number;
  validate?: MediaModel['validate'];
}): MediaModel {
  const attempt = async (job: MediaJob, rateLimitedTimes: number): Promise<JobStep> => {
    try {
      return { state: 'succeeded', outputs: await def.run(job) };
    } catch (err) {
      if (err instanceof UpstreamAnswerError) return { state: 'failed', message: `${def.label}: ${err.message}` };
      const again = (delayMs: number): JobStep => ({
        state: 'running',
        operation: { rate_limited: rateLimitedTimes + 1 } satisfies RateLimited,
        pollAfterMs: delayMs,
      });
      return stepForUpstreamError(err, def.label, again, rateLimitedTimes);
    }
  };
  return {
    schema: def.configured.schema,
    price: def.configured.price,
    finalPrice: def.configured.finalPrice,
    validate: def.validate,
    deadlineMs: def.deadlineMs ?? SYNC_DEADLINE_MS,
    start: (job) => attempt(job, 0),
    poll: async (job, operation) =>
      isRateLimited(operation)
        ? attempt(job, operation.rate_limited)
        : { state: 'failed', message: `${def.label}: unexpected upstream operation for a synchronous model` },
    // Between calls (waiting out a 429) nothing runs upstream. A call in flight cannot be recalled:
    // these APIs have no cancel; the gateway tells the client so when it cancels during one.
    async cancel() {},
  };
}

/** The upstream answered 2xx with something unusable (no images, not audio): retrying would not help. */
export class UpstreamAnswerError extends Error {
  override name = 'UpstreamAnswerError';
}
