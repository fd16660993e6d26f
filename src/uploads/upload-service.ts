import * as v from 'valibot';
import type { AppContext } from '../app/context.ts';
import { notFound, unprocessable } from '../http/errors.ts';
import { parseOr422 } from '../http/parse.ts';
import { urlLength } from '../http/url-length.ts';
import type { SavedFile } from '../storage/file-store.ts';
import { decodeBase64Stream } from './base64-decode-stream.ts';
import { openJsonUpload } from './json-upload-stream.ts';
import { openMultipartFile } from './multipart-stream.ts';
import { classifyUploadRequest, type UploadBodyKind } from './upload-request.ts';
import { uploadPlanFor } from './upload-plan.ts';
import { UploadQuota } from './upload-quota.ts';
import { openUrlSource } from './url-source.ts';
import { uploadGcPacer } from './gc-pacer.ts';
import { MIN_UPLOAD_BYTES_PER_SECOND, withMinimumRate } from './minimum-rate.ts';

/** A file_url download may take this long, body included. */
const URL_DOWNLOAD_TIMEOUT_MS = 10 * 60_000;

export const FileUrlBody = v.object({
  file_url: v.pipe(v.string(), v.nonEmpty('is required'), urlLength(), v.url('expected an absolute URL')),
});

/**
 * `PUT {upload_url}/upload`: the file of any of the three variants goes into the file store as
 * it arrives (multipart part, decoded base64, or the download of file_url), typed by sniffing
 * its bytes, within the per-file maximum and the account's upload limits.
 */
export class UploadService {
  private readonly quota: UploadQuota;

  constructor(private readonly ctx: Pick<AppContext, 'env' | 'store' | 'accounts' | 'files'>) {
    this.quota = new UploadQuota(ctx.store);
  }

  async upload(accountId: number, request: Request): Promise<SavedFile> {
    const maxBytes = this.ctx.env.maxUploadBytes;
    // Before the quota: a request that cannot succeed does not use up an upload.
    const kind = classifyUploadRequest(request.headers, maxBytes);
    const account = await this.ctx.accounts.get(accountId);
    if (!account) throw notFound('account not found');
    const bytes = await this.quota.admit(accountId, uploadPlanFor(Number(account.topped_up_usd)));
    let saved: SavedFile | undefined;
    try {
      const source = await this.open(kind, request, maxBytes);
      saved = await this.ctx.files.save({
        body: bytes.meter(source, { maxBytes, onChunk: (n) => uploadGcPacer.note(n) }),
        source: 'upload',
        accountId,
        maxBytes,
      });
      if (saved.sizeBytes === 0) throw unprocessable('the file is empty');
      await bytes.commit();
      return saved;
    } catch (err) {
      // Stored, but the upload failed after all (empty, or its bytes could not be counted): no
      // answer names the file, so it goes, rather than stay uncounted for good.
      if (saved) await this.ctx.files.remove(saved.id).catch(() => undefined);
      // A store hiccup here only leaves the day's counter a little high: never worth masking `err`.
      await bytes.release().catch(() => undefined);
      throw bytes.failure ?? err;
    }
  }

  private async open(kind: UploadBodyKind, request: Request, maxBytes: number): Promise<ReadableStream<Uint8Array>> {
    if (!request.body)
      throw unprocessable('request body is required: JSON {base64} or {file_url}, or multipart/form-data with file');
    const body = withMinimumRate(request.body, {
      bytesPerSecond: MIN_UPLOAD_BYTES_PER_SECOND,
      graceMs: this.ctx.env.bodyTimeoutMs,
    });
    if (kind.kind === 'multipart') {
      return (await openMultipartFile(body, kind.boundary, { field: 'file' })).body;
    }
    const json = await openJsonUpload(body);
    if (json.kind === 'base64') return decodeBase64Stream(json.text, maxBytes);
    const { file_url } = parseOr422(FileUrlBody, { file_url: json.url });
    return openUrlSource(file_url, {
      allowPrivate: this.ctx.env.allowPrivateUrls,
      maxBytes,
      timeoutMs: URL_DOWNLOAD_TIMEOUT_MS,
      signal: request.signal,
    });
  }
}
