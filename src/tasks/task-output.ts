import type { MediaKind } from '../../providers/types.ts';

/**
 * Stored outputs → the API contract's `output` object: `image_url`, `video_url` or `audio_url` for the
 * first file, plus `image_urls` / `audio_urls` with every file when there are several.
 */
export function outputObject(files: Array<{ kind: MediaKind; url: string }>): Record<string, unknown> {
  const output: Record<string, unknown> = {};
  for (const kind of ['image', 'video', 'audio'] as const) {
    const urls = files.filter((f) => f.kind === kind).map((f) => f.url);
    if (urls.length === 0) continue;
    output[`${kind}_url`] = urls[0];
    if (urls.length > 1 && kind !== 'video') output[`${kind}_urls`] = urls;
  }
  return output;
}

/** Webhook payloads exactly as the API contract's "Payloads" table. */
export const completedPayload = (taskId: string, output: unknown) => ({
  task_id: taskId,
  status: 'completed',
  data: output,
});
export const failedPayload = (taskId: string, errorMessage: string) => ({
  task_id: taskId,
  status: 'failed',
  error_message: errorMessage,
});
export const cancelledPayload = (taskId: string) => ({ task_id: taskId, status: 'cancelled' });
