import type { JobStep, MediaJob, MediaModel } from '../types.ts';
import type { ConfiguredMedia } from './config-media-model.ts';

/** What every queued job's operation keeps: when it started and how often it was polled. */
export interface QueuedOperation {
  started_at: number;
  polls: number;
}

/**
 * A media model on an upstream queue (submit, then poll an opaque operation stored on the task
 * row): the pieces every such provider shares. A fresh job submits with an empty operation; a
 * stored operation that no longer parses fails the task rather than guessing.
 */
export function queuedMediaModel<Op extends QueuedOperation>(def: {
  label: string;
  media: ConfiguredMedia;
  deadlineMs: number;
  parse(operation: unknown): Op | undefined;
  /** Gets a fresh operation (only `started_at` and `polls`) or one whose submission waited out a 429. */
  submit(job: MediaJob, op: Op | QueuedOperation): Promise<JobStep>;
  poll(job: MediaJob, op: Op): Promise<JobStep>;
  cancel(job: MediaJob, op: Op): Promise<void>;
}): MediaModel {
  return {
    schema: def.media.schema,
    price: def.media.price,
    finalPrice: def.media.finalPrice,
    deadlineMs: def.deadlineMs,
    start: (job) => def.submit(job, { started_at: Date.now(), polls: 0 }),
    async poll(job, operation) {
      const op = def.parse(operation);
      if (!op) return { state: 'failed', message: `${def.label}: the stored job state is unreadable` };
      return def.poll(job, op);
    },
    async cancel(job, operation) {
      const op = def.parse(operation);
      if (op) await def.cancel(job, op);
    },
  };
}
