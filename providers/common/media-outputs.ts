import type { MediaKind, MediaOutput } from '../types.ts';

export type MediaCategory = 'image' | 'video' | 'audio';

/** The media kind of a catalog category (`llm` models never run as media jobs). */
export function kindOf(category: string): MediaKind {
  return category === 'video' ? 'video' : category === 'audio' ? 'audio' : 'image';
}

const DATA_URL = /^data:([^;,]*)(;base64)?,(.*)$/s;

/**
 * A URL an upstream answered with, as a media output: `http(s)` URLs are downloaded into the
 * gateway's storage by the runner; `data:` URLs (what some models return for small files) are
 * decoded here. Anything else is not an output.
 */
export function outputFromUrl(url: string, kind: MediaKind, contentType?: string): MediaOutput | undefined {
  const data = DATA_URL.exec(url);
  if (data) {
    const [, type, base64, payload = ''] = data;
    let body: Buffer;
    try {
      body = base64 ? Buffer.from(payload, 'base64') : Buffer.from(decodeURIComponent(payload), 'utf8');
    } catch {
      // A bad percent-escape: not a file. Thrown, it failed the step again on every retry until the deadline.
      return undefined;
    }
    return { kind, body: new Uint8Array(body), contentType: type || contentType || 'application/octet-stream' };
  }
  if (!/^https?:\/\//i.test(url)) return undefined;
  return contentType ? { kind, url, contentType } : { kind, url };
}

/** Reads a dotted path (`images`, `output.video`) out of a JSON value. */
export function pick(value: unknown, path: string | undefined): unknown {
  if (!path) return value;
  let current = value;
  for (const key of path.split('.')) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}
