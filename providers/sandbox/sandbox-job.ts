import * as v from 'valibot';
import type { JobStep, MediaJob, MediaModel, MediaOutput } from '../types.ts';

/** Every sandbox media model takes these (docs/api-contract.md). */
export const commonFields = {
  delay_ms: v.optional(
    v.pipe(
      v.number('must be a number'),
      v.integer('must be an integer'),
      v.minValue(0, 'must be at least 0'),
      v.maxValue(60_000, 'must be at most 60000'),
    ),
    1000,
  ),
  fail: v.optional(v.boolean('must be a boolean'), false),
};

interface SandboxOperation {
  /** Unix ms when the simulated processing is done. */
  ready_at: number;
}

const isOperation = (op: unknown): op is SandboxOperation =>
  typeof (op as SandboxOperation | null)?.ready_at === 'number';

/**
 * A sandbox job: `start` records when it will be ready (so a restarted instance resumes it from
 * the task row), `poll` produces the real file once that time has come, or the simulated failure.
 */
export function sandboxModel<TInput extends Record<string, unknown>>(def: {
  schema: v.GenericSchema<unknown, TInput>;
  price(input: TInput): number;
  finalPrice?(input: TInput, outputs: MediaOutput[]): number;
  produce(input: TInput): MediaOutput[];
}): MediaModel {
  const step = (job: MediaJob, readyAt: number): JobStep => {
    const wait = readyAt - Date.now();
    if (wait > 0)
      return { state: 'running', operation: { ready_at: readyAt } satisfies SandboxOperation, pollAfterMs: wait };
    if (job.input.fail === true)
      return { state: 'failed', message: 'sandbox: simulated failure', detail: { simulated: true } };
    return { state: 'succeeded', outputs: def.produce(job.input as TInput) };
  };
  return {
    schema: def.schema as v.GenericSchema<unknown, Record<string, unknown>>,
    price: (input) => def.price(input as TInput),
    finalPrice: def.finalPrice ? (input, outputs) => def.finalPrice?.(input as TInput, outputs) ?? 0 : undefined,
    async start(job) {
      return step(job, Date.now() + Number(job.input.delay_ms ?? 0));
    },
    async poll(job, operation) {
      return step(job, isOperation(operation) ? operation.ready_at : 0);
    },
    // Nothing runs anywhere between polls: a cancelled task is simply never polled again.
    async cancel() {},
  };
}
