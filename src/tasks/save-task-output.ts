import type { MediaOutput } from '../../providers/types.ts';
import type { AppContext } from '../app/context.ts';
import { safeFetch } from '../net/safe-fetch.ts';
import type { OutputStore, TaskRef } from './keep-task-outputs.ts';
import { OutputRefused } from './output-failures.ts';

/** Long enough for a large video from a slow CDN; the file-size cap bounds the rest. */
const OUTPUT_DOWNLOAD_MS = 10 * 60_000;

/**
 * Copies a task's output into the gateway's storage, so the URLs clients get never expire:
 * bytes in hand are saved as they are; a provider's URL is downloaded (SSRF-checked, streamed,
 * size- and time-limited) and its type taken from the bytes.
 */
export function taskOutputStore(ctx: Pick<AppContext, 'env' | 'files'>): OutputStore {
  return {
    save: (task, output, signal) => saveTaskOutput(ctx, task, output, signal),
    remove: (id) => ctx.files.remove(id),
  };
}

async function saveTaskOutput(
  ctx: Pick<AppContext, 'env' | 'files'>,
  task: TaskRef,
  output: MediaOutput,
  signal: AbortSignal,
): Promise<{ id: string; url: string }> {
  if ('body' in output) {
    const saved = await ctx.files.save({
      body: output.body,
      contentType: output.contentType,
      source: 'task_output',
      accountId: task.accountId,
    });
    return { id: saved.id, url: saved.url };
  }
  const res = await safeFetch(
    output.url,
    { signal },
    {
      allowPrivate: ctx.env.allowPrivateUrls,
      field: 'output',
      timeoutMs: OUTPUT_DOWNLOAD_MS,
      maxBytes: ctx.env.maxUploadBytes,
    },
  );
  if (!res.ok || !res.body) {
    await res.body?.cancel().catch(() => undefined);
    const message = `output download failed: ${res.status} ${res.statusText}`;
    // The upstream's URL answers that it has no such file (expired, refused): asking again will not change it.
    throw res.status >= 400 && res.status < 500 && res.status !== 408 && res.status !== 429
      ? new OutputRefused(message)
      : new Error(message);
  }
  const saved = await ctx.files.save({ body: res.body, source: 'task_output', accountId: task.accountId });
  return { id: saved.id, url: saved.url };
}
