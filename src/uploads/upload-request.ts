import { EnvelopeError, payloadTooLarge } from '../http/errors.ts';
import { mediaType } from '../../providers/common/file-extension.ts';
import { MULTIPART_OVERHEAD_BYTES, multipartBoundary } from './multipart-stream.ts';

export type UploadBodyKind = { kind: 'multipart'; boundary: string } | { kind: 'json' };

/** JSON around the base64 text: member names, a data URI header, escaped line breaks. */
const JSON_OVERHEAD_BYTES = 64 * 1024;

/**
 * Which of the three upload variants the request is, from its Content-Type (JSON when none is given),
 * and an early 413 when its Content-Length already proves the file too large, before a byte of
 * the body is read.
 */
export function classifyUploadRequest(headers: Headers, maxFileBytes: number): UploadBodyKind {
  const contentType = headers.get('content-type') ?? '';
  const type = mediaType(contentType);
  let body: UploadBodyKind;
  if (type === 'multipart/form-data') body = { kind: 'multipart', boundary: multipartBoundary(contentType) };
  else if (type === '' || type === 'application/json' || type.endsWith('+json')) body = { kind: 'json' };
  else
    throw new EnvelopeError(
      415,
      `content-type must be application/json ({base64} or {file_url}) or multipart/form-data (file), not ${type}`,
    );

  const declared = Number(headers.get('content-length') ?? Number.NaN);
  if (Number.isFinite(declared) && declared > maxRequestBytes(body, maxFileBytes)) {
    throw payloadTooLarge(`file is larger than ${maxFileBytes} bytes (request body of ${declared} bytes)`);
  }
  return body;
}

/** The largest body that can still carry a file of `maxFileBytes`. */
export function maxRequestBytes(body: UploadBodyKind, maxFileBytes: number): number {
  if (body.kind === 'multipart') return maxFileBytes + MULTIPART_OVERHEAD_BYTES;
  // Base64 is 4 characters per 3 bytes; MIME-style line breaks ("\r\n" every 76) add up to 6 %.
  return Math.ceil(Math.ceil(maxFileBytes / 3) * 4 * 1.06) + JSON_OVERHEAD_BYTES;
}
