import { EnvelopeError } from './errors.ts';
import { jsonTextTooDeep } from '../../translators/common/json-text-depth.ts';
import { MAX_JSON_DEPTH } from './hostile-json.ts';

/**
 * Reading request bodies of the JSON endpoints under limits enforced while the bytes arrive:
 * a declared `Content-Length` over the cap is refused before a byte is read, a streamed body
 * is cut off the moment it crosses the cap, and the whole body must arrive within a deadline.
 * JSON nesting deeper than `MAX_JSON_DEPTH` is refused by a bracket scan before `JSON.parse`.
 *
 * Refusals are BodyErrors: the envelope by default, reshaped into the path's own error shape
 * (the LLM formats) by `bodyErrorHandler`. A refusal that leaves the body unread asks for the
 * connection to be closed, so the rest of the body is never read either.
 */
export interface BodyLimits {
  maxBytes: number;
  timeoutMs: number;
}

const MIB = 1024 * 1024;
/** Tasks, account, admin, dashboard and every other JSON endpoint. */
export const JSON_BODY_MAX_BYTES = MIB;
/** The LLM and embeddings endpoints: long conversations with inline images, batches of documents. */
export const LLM_BODY_MAX_BYTES = 32 * MIB;
/** Path prefixes of the LLM endpoints (`/v1/messages` covers `/v1/messages/count_tokens`) and embeddings. */
export const LLM_BODY_PATHS = ['/v1/chat/completions', '/v1/responses', '/v1/messages', '/v1/embeddings'];

export function bodyLimitsFor(path: string, timeoutMs: number): BodyLimits {
  const llm = LLM_BODY_PATHS.some((prefix) => path === prefix || path.startsWith(`${prefix}/`));
  return { maxBytes: llm ? LLM_BODY_MAX_BYTES : JSON_BODY_MAX_BYTES, timeoutMs };
}

export type BodyErrorKind = 'too_large' | 'timeout' | 'unreadable' | 'invalid_json' | 'too_deep';

const STATUS: Record<BodyErrorKind, number> = {
  too_large: 413,
  timeout: 408,
  unreadable: 400,
  invalid_json: 422,
  too_deep: 422,
};

export class BodyError extends EnvelopeError {
  constructor(
    readonly kind: BodyErrorKind,
    message: string,
  ) {
    super(STATUS[kind], message);
    this.name = 'BodyError';
    // The body was not read to its end: the connection cannot carry another request.
    if (kind === 'too_large' || kind === 'timeout' || kind === 'unreadable') this.headers.connection = 'close';
  }
}

export const bodyTooLarge = (maxBytes: number) =>
  new BodyError('too_large', `request body is larger than ${maxBytes} bytes`);

const decoder = new TextDecoder();

/** Requests whose body was read to its end (so their connection can carry the next request). */
const fullyRead = new WeakSet<Request>();

export function bodyFullyRead(request: Request): boolean {
  return fullyRead.has(request);
}

/** The request, as it came over HTTP, carries a body (declared length above zero, or chunked). */
export function hasRequestBody(request: Request): boolean {
  const length = request.headers.get('content-length');
  if (length !== null) return length !== '0';
  return request.headers.has('transfer-encoding');
}

const timedOut = (limits: BodyLimits) =>
  new BodyError('timeout', `request body did not arrive within ${limits.timeoutMs / 1000} s`);

/** The body as text (UTF-8), within `limits`. */
export async function readBodyText(request: Request, limits: BodyLimits): Promise<string> {
  const declared = request.headers.get('content-length');
  if (declared !== null && Number(declared) > limits.maxBytes) throw bodyTooLarge(limits.maxBytes);
  // HTTP framing makes such a body exactly its declared length, within the cap (Bun refuses a
  // request declaring both a length and chunked): Bun's own reader is the fastest way to it.
  if (declared !== null && !request.headers.has('transfer-encoding')) return readDeclared(request, limits);
  return decoder.decode(await readBodyBytes(request, limits));
}

async function readDeclared(request: Request, limits: BodyLimits): Promise<string> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(timedOut(limits)), limits.timeoutMs);
  });
  const reading = request.text();
  // Past the deadline the read is abandoned; the connection is closed under it.
  reading.catch(() => undefined);
  try {
    const text = await Promise.race([reading, deadline]);
    fullyRead.add(request);
    return text;
  } catch (err) {
    if (err instanceof BodyError) throw err;
    throw new BodyError('unreadable', 'request body could not be read to its end');
  } finally {
    clearTimeout(timer);
  }
}

/** The body's bytes as they stream in, within `limits` (the declared length, if any, checked first). */
export async function readBodyBytes(request: Request, limits: BodyLimits): Promise<Uint8Array> {
  const declared = request.headers.get('content-length');
  if (declared !== null && Number(declared) > limits.maxBytes) throw bodyTooLarge(limits.maxBytes);
  const body = request.body;
  if (!body) {
    fullyRead.add(request);
    return new Uint8Array(0);
  }
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let late = false;
  // Cancelling the reader settles the pending read at once; the flag says why it ended.
  const timer = setTimeout(() => {
    late = true;
    void reader.cancel().catch(() => undefined);
  }, limits.timeoutMs);
  try {
    for (;;) {
      let chunk: Awaited<ReturnType<typeof reader.read>>;
      try {
        chunk = await reader.read();
      } catch {
        if (late) break;
        throw new BodyError('unreadable', 'request body could not be read to its end');
      }
      if (late || chunk.done) break;
      size += chunk.value.byteLength;
      if (size > limits.maxBytes) throw bodyTooLarge(limits.maxBytes);
      chunks.push(chunk.value);
    }
    if (late) throw timedOut(limits);
  } catch (err) {
    void reader.cancel(err).catch(() => undefined);
    throw err;
  } finally {
    clearTimeout(timer);
  }
  fullyRead.add(request);
  if (chunks.length === 1) return chunks[0] as Uint8Array;
  const out = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

/** JSON text → value; deep nesting is refused before `JSON.parse` sees the text. */
export function parseJsonText(text: string): unknown {
  if (jsonTextTooDeep(text, MAX_JSON_DEPTH))
    throw new BodyError('too_deep', `request body nests deeper than ${MAX_JSON_DEPTH} levels`);
  try {
    return JSON.parse(text);
  } catch {
    throw new BodyError('invalid_json', 'request body is not valid JSON');
  }
}

export async function readJsonBody(request: Request, limits: BodyLimits): Promise<unknown> {
  return parseJsonText(await readBodyText(request, limits));
}

const isJsonType = (type: string) => type === 'application/json' || type.endsWith('+json');

/**
 * The body as a JSON endpoint's handler sees it, for Elysia's parse phase: JSON types parsed,
 * `null` for an empty body; a body of any other type is refused, saying which type it came as
 * (`curl -d` sends JSON as a form, and "must be a JSON object" read as a riddle). Not accepted
 * anyway: a browser sends such types cross-site without asking, and the dashboard signs in with a
 * cookie. Without a content type: undefined, as Elysia's own parser leaves it (and the body
 * unread). `contentType` is the media type without parameters. Never undefined when a content
 * type is given: that would let Elysia's own, unlimited parser read the body after all.
 */
export async function parseRequestBody(request: Request, contentType: string, limits: BodyLimits): Promise<unknown> {
  if (!contentType) return undefined;
  if (request.body === null) return null;
  const text = await readBodyText(request, limits);
  if (text === '') return null;
  const type = contentType.trim().toLowerCase();
  if (isJsonType(type)) return parseJsonText(text);
  throw new BodyError(
    'invalid_json',
    `request body: send JSON with content-type: application/json (it came as ${JSON.stringify(type.slice(0, 80))})`,
  );
}
