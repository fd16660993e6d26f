import type { KeptSample } from '../../providers/common/resources.ts';
import { EnvelopeError, unprocessable } from '../http/errors.ts';
import { type SafeFetchOptions, safeFetch } from '../net/safe-fetch.ts';
import type { FileStore, SavedFile } from '../storage/file-store.ts';
import type { DailyByteMeter } from '../uploads/daily-byte-meter.ts';
import { peekStream } from '../storage/peek-stream.ts';
import { SNIFF_BYTES, sniffContentType } from '../../providers/common/sniff-content-type.ts';
import { AUDIO_SAMPLE_FORMATS, isAudioSampleType } from './audio-sample-type.ts';

/** At most 25 samples of at most 25 MB each (docs/api-contract.md, "Limits"). */
export const MAX_SAMPLES = 25;
export const MAX_SAMPLE_BYTES = 25 * 1024 * 1024;
/** Per sample, headers and body: 25 MB over a slow link, not a stalled one held forever. */
const SAMPLE_DOWNLOAD_MS = 60_000;
/** Samples fetched at once: quick for 25 small files, gentle on the source and our memory. */
const PARALLEL = 4;

export interface SampleKeeperDeps {
  files: FileStore;
  allowPrivate: boolean;
  /** Lower than 25 MB when the gateway's own file cap is. */
  maxBytes?: number;
  fetch?: SafeFetchOptions['fetch'];
  /** Counts every sample's bytes against the account's daily upload volume (src/uploads/daily-byte-meter.ts). */
  bytes?: Pick<DailyByteMeter, 'meter' | 'failure'>;
  /** The client went away: the downloads stop. */
  signal?: AbortSignal;
}

/**
 * Downloads each sample URL (SSRF-checked, no redirects: samples are direct-download URLs,
 * size- and time-limited), checks by its bytes that it is audio, and keeps a copy in storage, so
 * the voice outlives the sources. All or nothing: on any failure the copies made so far are
 * removed and the error names the sample (`samples[3]: …`).
 */
export async function keepVoiceSamples(
  urls: string[],
  accountId: number,
  deps: SampleKeeperDeps,
): Promise<SavedFile[]> {
  const abort = new AbortController();
  const onGone = () => abort.abort();
  deps.signal?.addEventListener('abort', onGone, { once: true });
  const kept: SavedFile[] = [];
  let failure: unknown;
  let next = 0;
  const worker = async () => {
    while (next < urls.length && failure === undefined) {
      const index = next++;
      try {
        kept[index] = await keepOne(urls[index] as string, index, accountId, deps, abort.signal);
      } catch (err) {
        // The first failure is the answer; the downloads it aborts fail too, and are not.
        failure ??= err;
        abort.abort();
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL, urls.length) }, worker));
  deps.signal?.removeEventListener('abort', onGone);
  if (failure === undefined) return kept;
  await removeKept(deps.files, kept.filter(Boolean));
  throw failure;
}

/** Removes kept sample copies no voice names (best effort: a file that cannot go now stays). */
export function removeKept(
  files: { remove(id: string): Promise<void> },
  kept: ReadonlyArray<{ id: string }>,
): Promise<unknown> {
  return Promise.all(kept.map((file) => files.remove(file.id).catch(() => undefined)));
}

async function keepOne(
  url: string,
  index: number,
  accountId: number,
  deps: SampleKeeperDeps,
  signal: AbortSignal,
): Promise<SavedFile> {
  const field = `samples[${index}]`;
  const maxBytes = Math.min(MAX_SAMPLE_BYTES, deps.maxBytes ?? MAX_SAMPLE_BYTES);
  let body: ReadableStream<Uint8Array>;
  let contentType: string;
  try {
    const res = await safeFetch(
      url,
      { signal },
      {
        allowPrivate: deps.allowPrivate,
        field,
        timeoutMs: SAMPLE_DOWNLOAD_MS,
        maxBytes,
        followRedirects: false,
        fetch: deps.fetch,
      },
    );
    if (res.status >= 300 && res.status < 400) {
      await res.body?.cancel();
      throw unprocessable(`${field}: the URL redirects (HTTP ${res.status}); give a direct download URL`);
    }
    if (!res.ok || !res.body) {
      await res.body?.cancel();
      throw unprocessable(`${field}: download failed with HTTP ${res.status}`);
    }
    const peeked = await peekStream(res.body, SNIFF_BYTES);
    contentType = sniffContentType(peeked.head);
    body = peeked.stream;
  } catch (err) {
    throw asSampleError(field, err, 'could not be downloaded');
  }
  if (!isAudioSampleType(contentType)) {
    await body.cancel().catch(() => undefined);
    throw unprocessable(
      `${field}: not an audio file (its bytes read as ${contentType}); expected ${AUDIO_SAMPLE_FORMATS}`,
    );
  }
  try {
    const metered = deps.bytes ? deps.bytes.meter(body) : body;
    return await deps.files.save({ body: metered, contentType, source: 'voice_sample', accountId, maxBytes });
  } catch (err) {
    // The day's upload volume used up is the account's limit, answered as an upload's (429).
    const cause = deps.bytes?.failure ?? err;
    if (cause instanceof EnvelopeError && cause.status === 429) throw cause;
    // Only the client's side is a 422 (too large, cut off by a limit); a storage failure stays a 500.
    if (err instanceof EnvelopeError) throw asSampleError(field, err, 'could not be kept');
    throw err;
  }
}

/** Any failure of one sample as a 422 that names it: a bad sample is a bad request parameter. */
function asSampleError(field: string, err: unknown, what: string): EnvelopeError {
  if (err instanceof EnvelopeError && err.status === 422 && err.message.startsWith(field)) return err;
  const message =
    err instanceof EnvelopeError ? err.message : `${what} (${err instanceof Error ? err.message : String(err)})`;
  return unprocessable(message.startsWith(field) ? message : `${field}: ${message}`);
}

/** A kept sample as providers see it; `read` streams its stored bytes (the storage key is the file id). */
export const keptSample = (file: SavedFile, files: Pick<FileStore, 'storage'>): KeptSample => ({
  url: file.url,
  contentType: file.contentType,
  read: () => files.storage.read(file.id),
});
