import type { MediaOutput } from '../../providers/types.ts';
import type { AppContext } from '../app/context.ts';
import { safeFetch } from '../net/safe-fetch.ts';

/** Long enough for a large video from a slow CDN; the file-size cap bounds the rest. */
const OUTPUT_DOWNLOAD_MS = 10 * 60_000;

/**
 * Copies a task's output into the gateway's storage, so the URLs clients get never expire:
 * bytes in hand are saved as they are; a provider's URL is downloaded (SSRF-checked, streamed,
 * size- and time-limited) and its type taken from the bytes.
 */
export function saveTaskOutput(ctx: Pick<AppContext, 'env' | 'files'>) {
  return async (task: { id: string; accountId: number }, output: MediaOutput, signal: AbortSignal): Promise<string> => {
    if ('body' in output) {
      const saved = await ctx.files.save({
        body: output.body,
        contentType: output.contentType,
        source: 'task_output',
        accountId: task.accountId,
      });
      return saved.url;
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
    if (!res.ok || !res.body) throw new Error(`output download failed: ${res.status} ${res.statusText}`);
    const saved = await ctx.files.save({ body: res.body, source: 'task_output', accountId: task.accountId });
    return saved.url;
  };
}
