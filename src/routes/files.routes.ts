import { Elysia } from 'elysia';
import type { AppContext } from '../app/context.ts';
import { EnvelopeError, notFound } from '../http/errors.ts';
import type { StoredFileRow } from '../db/tables/stored-files.table.ts';
import { etagMatches, parseRange } from '../storage/byte-range.ts';
import { extensionFor, mediaType } from '../../providers/common/file-extension.ts';
import type { FileStore } from '../storage/file-store.ts';

/**
 * Stored files: `GET|HEAD {upload_url}/files/<id>[.<ext>]`.
 *
 * Served WITHOUT authentication, deliberately (the API contract's "every endpoint requires the header"
 * is about the API): task outputs are handed to browsers, `<video>`/`<audio>` elements and media
 * players, none of which send an Authorization header. The id is the capability instead: 144
 * random bits, never listed, known only to whoever received the URL — like a presigned URL that
 * does not expire.
 *
 * Files never change under an id, so the sha256 is a strong ETag and caching is `immutable`.
 * Only image, video and audio types render inline; anything else (HTML and SVG included) is an
 * attachment with `nosniff`, so no stored file can run script in the gateway's origin.
 */
const CACHE_CONTROL = 'private, max-age=31536000, immutable';

const PREFIX = '/files/';

export function fileRoutes(ctx: Pick<AppContext, 'files'>) {
  return (
    new Elysia({ name: 'files', prefix: '/files' })
      // HEAD is answered before routing: for a route with a parameter, Elysia 1.4 sends HEAD to the
      // GET handler (even when a HEAD handler exists) and reads the whole body to count its length.
      .onRequest(({ request }) => {
        if (request.method !== 'HEAD') return;
        const path = new URL(request.url).pathname;
        const name = path.startsWith(PREFIX) ? path.slice(PREFIX.length) : '';
        if (name && !name.includes('/')) return serveFile(ctx.files, request, name, 'HEAD');
      })
      // A name Elysia could not decode arrives as null (the request-target guard refuses it first).
      .get('/:name', ({ params, request }) => serveFile(ctx.files, request, params.name ?? '', 'GET'))
  );
}

async function serveFile(files: FileStore, request: Request, name: string, method: 'GET' | 'HEAD'): Promise<Response> {
  const row = await files.find(name);
  if (!row) throw notFound(`file ${name} not found`);
  const tag = row.sha256 ?? (await files.storage.stat(row.storage_key))?.etag;
  if (!tag) throw notFound(`file ${name} not found`);
  const etag = `"${tag}"`;
  const size = row.size_bytes;

  // If-None-Match is evaluated before Range. @see RFC 9110 §13.2.2
  if (etagMatches(request.headers.get('if-none-match'), etag)) {
    return new Response(null, { status: 304, headers: { etag, 'cache-control': CACHE_CONTROL } });
  }
  const headers = fileHeaders(row, etag);
  // Range is defined for GET only; If-Range with another validator means "send it all".
  const ifRange = request.headers.get('if-range');
  const range =
    method === 'GET' && (ifRange === null || ifRange === etag)
      ? parseRange(request.headers.get('range'), size)
      : undefined;
  if (range === 'unsatisfiable') {
    const err = new EnvelopeError(416, `range not satisfiable: the file has ${size} bytes`);
    err.headers['content-range'] = `bytes */${size}`;
    throw err;
  }
  if (method === 'HEAD')
    return new Response(null, { status: 200, headers: { ...headers, 'content-length': String(size) } });

  const body = await files.storage.read(row.storage_key, range);
  if (!body) throw notFound(`file ${name} not found`);
  if (!range) return new Response(body, { status: 200, headers: { ...headers, 'content-length': String(size) } });
  return new Response(body, {
    status: 206,
    headers: {
      ...headers,
      'content-length': String(range.end - range.start + 1),
      'content-range': `bytes ${range.start}-${range.end}/${size}`,
    },
  });
}

function fileHeaders(row: StoredFileRow, etag: string): Record<string, string> {
  const type = mediaType(row.content_type);
  const inline = /^(image|video|audio)\//.test(type) && type !== 'image/svg+xml';
  const ext = extensionFor(row.content_type);
  const filename = `${row.id}${ext ? `.${ext}` : ''}`;
  return {
    'content-type': row.content_type,
    etag,
    'accept-ranges': 'bytes',
    'cache-control': CACHE_CONTROL,
    'x-content-type-options': 'nosniff',
    'content-disposition': `${inline ? 'inline' : 'attachment'}; filename="${filename}"`,
    // Belt and braces for the attachment types, should a browser render one anyway.
    ...(inline ? {} : { 'content-security-policy': "default-src 'none'; sandbox" }),
  };
}
