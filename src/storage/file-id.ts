/**
 * Stored file ids are capabilities: whoever has the URL can read the file (see files.routes.ts),
 * so they carry 144 random bits, URL-safe base64 without padding (24 characters).
 */
const ID_BYTES = 18;
const ID_PATTERN = /^[A-Za-z0-9_-]{24}$/;

export function newFileId(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(ID_BYTES))).toString('base64url');
}

/** The id in a URL's last segment, with or without its extension (`<id>` or `<id>.png`). */
export function fileIdFromName(name: string): string | undefined {
  if (typeof name !== 'string') return undefined;
  const dot = name.indexOf('.');
  const id = dot === -1 ? name : name.slice(0, dot);
  return ID_PATTERN.test(id) ? id : undefined;
}
