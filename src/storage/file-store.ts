import type { Db } from '../db/database.ts';
import type { StoredFileRow, StoredFilesTable } from '../db/tables/stored-files.table.ts';
import { FileTooLargeError, meterStream } from './byte-limit.ts';
import { extensionFor } from '../../providers/common/file-extension.ts';
import { fileIdFromName, newFileId } from './file-id.ts';
import { peekStream } from './peek-stream.ts';
import { OCTET_STREAM, SNIFF_BYTES, sniffContentType } from '../../providers/common/sniff-content-type.ts';
import type { Storage } from './storage.ts';
import { deleteStoredFile, findStoredFile, insertStoredFile } from './stored-files.repository.ts';

export type FileSource = StoredFilesTable['source'];

export interface SaveFileInput {
  body: Uint8Array | ReadableStream<Uint8Array>;
  /** The type to serve. Omit it (or give octet-stream) for bytes from outside: it is sniffed. */
  contentType?: string;
  source: FileSource;
  accountId: number | null;
  /** Defaults to `MAX_UPLOAD_BYTES`. */
  maxBytes?: number;
}

export interface SavedFile {
  id: string;
  /** `{upload_url}/files/<id>.<ext>`: public, the id is the capability. */
  url: string;
  contentType: string;
  sizeBytes: number;
  sha256: string;
}

/** A declared type we can put in a header as it is; anything else is sniffed instead. */
const CONTENT_TYPE =
  /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+(\s*;\s*[a-z0-9!#$&^_.+-]+=("[^"\r\n]*"|[a-z0-9!#$&^_.+-]+))*$/i;

/**
 * Stored files: bytes in Storage under the file's id, metadata in `stored_files`. The sha256 is
 * computed while the bytes stream by and doubles as the strong ETag the route serves.
 */
export class FileStore {
  constructor(
    private readonly db: Db,
    readonly storage: Storage,
    private readonly opts: { uploadUrl: string; maxBytes: number },
  ) {}

  async save(input: SaveFileInput): Promise<SavedFile> {
    const id = newFileId();
    const maxBytes = input.maxBytes ?? this.opts.maxBytes;
    const declared = input.contentType?.trim();
    let contentType =
      declared && CONTENT_TYPE.test(declared) && declared.toLowerCase() !== OCTET_STREAM ? declared : undefined;
    const hasher = new Bun.CryptoHasher('sha256');
    let body = input.body;
    if (body instanceof Uint8Array) {
      if (body.byteLength > maxBytes) throw new FileTooLargeError(maxBytes);
      contentType ??= sniffContentType(body.subarray(0, SNIFF_BYTES));
      hasher.update(body);
    } else {
      if (!contentType) {
        const peeked = await peekStream(body, SNIFF_BYTES);
        contentType = sniffContentType(peeked.head);
        body = peeked.stream;
      }
      body = meterStream(body, { onChunk: (chunk) => hasher.update(chunk) });
    }
    const info = await this.storage.put(id, body, { contentType, maxBytes });
    const sha256 = hasher.digest('hex');
    try {
      await insertStoredFile(this.db, {
        id,
        account_id: input.accountId,
        storage_key: id,
        content_type: contentType,
        size_bytes: info.size,
        sha256,
        source: input.source,
      });
    } catch (err) {
      // No row, no file: the bytes would be unreachable forever.
      await this.storage.delete(id).catch(() => undefined);
      throw err;
    }
    return { id, url: this.urlOf({ id, content_type: contentType }), contentType, sizeBytes: info.size, sha256 };
  }

  /** The row of `<id>` or `<id>.<ext>`; undefined for anything else. */
  async find(name: string): Promise<StoredFileRow | undefined> {
    const id = fileIdFromName(name);
    if (!id) return undefined;
    return findStoredFile(this.db, id);
  }

  urlOf(row: Pick<StoredFileRow, 'id' | 'content_type'>): string {
    const ext = extensionFor(row.content_type);
    return `${this.opts.uploadUrl}/files/${row.id}${ext ? `.${ext}` : ''}`;
  }

  async remove(id: string): Promise<void> {
    const storageKey = await deleteStoredFile(this.db, id);
    if (storageKey) await this.storage.delete(storageKey);
  }
}
