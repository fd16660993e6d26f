import type { JobStep, MediaKind, MediaOutput } from '../types.ts';
import { outputFromUrl, pick } from '../common/media-outputs.ts';

/**
 * A Replicate prediction as `POST /predictions`, `GET /predictions/{id}` and the webhook carry it.
 * @see https://replicate.com/docs/reference/http#predictions.get
 */
export interface Prediction {
  id: string;
  status: 'starting' | 'processing' | 'succeeded' | 'failed' | 'canceled' | 'aborted' | string;
  output?: unknown;
  error?: unknown;
  urls?: { get?: string; cancel?: string };
}

export const TERMINAL = new Set(['succeeded', 'failed', 'canceled', 'aborted']);

export function isPrediction(value: unknown): value is Prediction {
  const p = value as Prediction | null;
  return typeof p === 'object' && p !== null && typeof p.id === 'string' && typeof p.status === 'string';
}

/** What the gateway keeps of a finished prediction (its input and logs stay upstream). */
export function trimPrediction(p: Prediction): Prediction {
  return { id: p.id, status: p.status, output: p.output ?? null, error: p.error ?? null };
}

/**
 * Replicate outputs are whatever the model returns: a file URL, a list of them, or an object
 * whose values are (lists of) URLs. Files are HTTPS URLs, or data URLs for small ones.
 */
function collectUrls(value: unknown, into: string[]): void {
  if (typeof value === 'string') into.push(value);
  else if (Array.isArray(value)) for (const item of value) collectUrls(item, into);
  else if (value !== null && typeof value === 'object')
    for (const item of Object.values(value)) collectUrls(item, into);
}

export function predictionOutputs(output: unknown, kind: MediaKind, outputField?: string): MediaOutput[] {
  const urls: string[] = [];
  collectUrls(pick(output, outputField), urls);
  return urls.flatMap((url) => outputFromUrl(url, kind) ?? []);
}

function errorText(error: unknown): string {
  if (typeof error === 'string' && error.trim()) return error.trim();
  if (error && typeof error === 'object') return JSON.stringify(error);
  return 'no error text given';
}

/** A finished prediction as the task's last step; undefined while it still runs. */
export function finishedStep(p: Prediction, kind: MediaKind, outputField?: string): JobStep | undefined {
  switch (p.status) {
    case 'succeeded': {
      const outputs = predictionOutputs(p.output, kind, outputField);
      if (outputs.length === 0)
        return {
          state: 'failed',
          message: 'replicate: the prediction succeeded without a file output',
          detail: { prediction_id: p.id, output: p.output ?? null },
        };
      return { state: 'succeeded', outputs };
    }
    case 'failed':
      return {
        state: 'failed',
        message: `replicate: ${errorText(p.error)}`,
        detail: { prediction_id: p.id, status: p.status },
      };
    case 'canceled':
    case 'aborted':
      return {
        state: 'failed',
        message: `replicate: the prediction was ${p.status} upstream`,
        detail: { prediction_id: p.id, status: p.status },
      };
    default:
      return undefined;
  }
}
