import { UpstreamError, upstreamMessage } from './upstream-error.ts';

/**
 * Largest whole answer an upstream may send (a non-streamed LLM answer, a media API's JSON). The
 * largest real ones are a few base64 images; without a bound, one broken or hostile upstream
 * streaming an endless body would take the process's memory, and every account's calls with it.
 */
export const MAX_UPSTREAM_BODY_BYTES = 64 * 1024 * 1024;

const tooLarge = (status: number, maxBytes: number) =>
  new UpstreamError('malformed', `upstream answered ${status} with a body larger than ${maxBytes} bytes`, status);

/** The body's declared `content-length`, when it declares one. */
function declaredLength(response: Response): number | undefined {
  const declared = response.headers.get('content-length');
  return declared !== null && /^\d+$/.test(declared) ? Number(declared) : undefined;
}

/**
 * A response's body, refused as `malformed` (not retried: the same call would get it again) past
 * `maxBytes`. A declared `content-length` within the bound is read natively (the framing allows
 * no more bytes than it says); a chunked body is counted as it arrives and cancelled the moment it
 * crosses the bound.
 */
export async function readUpstreamBytes(response: Response, maxBytes = MAX_UPSTREAM_BODY_BYTES): Promise<Uint8Array> {
  const declared = declaredLength(response);
  if (declared !== undefined) {
    if (declared > maxBytes) {
      await response.body?.cancel().catch(() => undefined);
      throw tooLarge(response.status, maxBytes);
    }
    return new Uint8Array(await response.arrayBuffer());
  }
  if (!response.body) return new Uint8Array(0);
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let received = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    received += value.byteLength;
    if (received > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge(response.status, maxBytes);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/** `readUpstreamBytes` as text (a leading BOM dropped, as `Response.text()` does). */
export async function readUpstreamText(response: Response, maxBytes = MAX_UPSTREAM_BODY_BYTES): Promise<string> {
  const declared = declaredLength(response);
  // The common case, a JSON answer of declared length, stays native end to end.
  if (declared !== undefined && declared <= maxBytes) return response.text();
  return new TextDecoder().decode(await readUpstreamBytes(response, maxBytes));
}

/** How much of an error answer (or of a body that is not an event stream) is read to say what it was. */
const ERROR_TEXT_BYTES = 64 * 1024;

/**
 * The start of an answer that is read only to say what went wrong (a 4xx or 5xx body): at most
 * `maxBytes`, the rest cancelled, never a rejection. An error page of any size costs no more.
 */
export async function upstreamErrorText(response: Response, maxBytes = ERROR_TEXT_BYTES): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let received = 0;
  try {
    while (received < maxBytes) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      received += value.byteLength;
    }
  } catch {
    // a body that fails half-way says what it said so far
  }
  if (received >= maxBytes) await reader.cancel().catch(() => undefined);
  // `fatal: false`: a multi-byte character cut at the bound becomes U+FFFD.
  return new TextDecoder().decode(Buffer.concat(chunks).subarray(0, maxBytes));
}

/**
 * The body of an answer to a streaming request. One that is not an event stream (a JSON error
 * sent with 200, a proxy's HTML page) is refused as `malformed`, naming its type and what it
 * said, where the stream's parser would have found no event in it and said only that the
 * stream ended before its first event. No content type at all is read as a stream.
 */
export async function eventStreamBody(response: Response): Promise<ReadableStream<Uint8Array>> {
  const type = response.headers.get('content-type');
  if (response.body && (type === null || type.toLowerCase().includes('text/event-stream'))) return response.body;
  const said = await upstreamErrorText(response);
  const what = said.trim() ? `: ${upstreamMessage(said, response.status)}` : '';
  throw new UpstreamError(
    'malformed',
    `upstream answered ${response.status} with ${type?.split(';')[0]?.trim() || 'no body'} instead of an event stream${what}`,
    response.status,
  );
}
