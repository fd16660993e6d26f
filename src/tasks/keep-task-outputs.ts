import type { MediaKind, MediaOutput } from '../../providers/types.ts';
import { isFinalOutputFailure, OutputRefused } from './output-failures.ts';

/**
 * Most outputs one task keeps. Models make a handful (image models ask for at most 10 or 15);
 * an upstream answering thousands of URLs would hold the step for hours of downloads and fill
 * the account's storage, so such an answer fails the task (refunded). docs/limits.md.
 */
export const MAX_TASK_OUTPUTS = 100;

export interface TaskRef {
  id: string;
  accountId: number;
}

/** Where task outputs are kept: the gateway's file store (src/tasks/save-task-output.ts). */
export interface OutputStore {
  /** Keeps one output; the stored file's id and public URL. */
  save(task: TaskRef, output: MediaOutput, signal: AbortSignal): Promise<{ id: string; url: string }>;
  remove(fileId: string): Promise<void>;
}

export interface KeptOutput {
  id: string;
  kind: MediaKind;
  url: string;
}

/**
 * Keeps every output of a step, or none: when one cannot be stored, those stored before it are
 * removed (no task would ever name them, and a retried step stores them again). Each output
 * whose failure may pass (a storage hiccup, a 5xx) is tried twice more, 1 and 2 s apart, within
 * the step: for a model that answers at once the outputs exist only in this step.
 */
export async function keepTaskOutputs(
  store: OutputStore,
  task: TaskRef,
  outputs: readonly MediaOutput[],
  signal: AbortSignal,
): Promise<KeptOutput[]> {
  if (outputs.length > MAX_TASK_OUTPUTS)
    throw new OutputRefused(`the upstream returned ${outputs.length} outputs; at most ${MAX_TASK_OUTPUTS} are kept`);
  const kept: KeptOutput[] = [];
  try {
    for (const output of outputs) kept.push({ kind: output.kind, ...(await keepOne(store, task, output, signal)) });
    return kept;
  } catch (err) {
    await discardTaskOutputs(store, kept);
    throw err;
  }
}

/** Removes kept outputs no task will name; a file that cannot be removed now is left (best effort). */
export async function discardTaskOutputs(store: OutputStore, kept: readonly KeptOutput[]): Promise<void> {
  for (const file of kept) await store.remove(file.id).catch(() => undefined);
}

async function keepOne(store: OutputStore, task: TaskRef, output: MediaOutput, signal: AbortSignal) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await store.save(task, output, signal);
    } catch (err) {
      if (attempt >= 3 || isFinalOutputFailure(err) || signal.aborted) throw err;
      await Bun.sleep(1000 * attempt);
    }
  }
}
