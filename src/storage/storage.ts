/**
 * Where file bytes live: local disk under `DATA_DIR/files` by default, any S3-compatible store
 * when `S3_BUCKET` is set. Keys are opaque and unguessable (they are the files' URL paths);
 * metadata (owner, content type, size) lives in the `stored_files` table, not here.
 */
export interface ByteRange {
  /** First byte, inclusive. */
  start: number;
  /** Last byte, inclusive. */
  end: number;
}

export interface StoredObjectInfo {
  size: number;
  /** A strong validator for `ETag` (quoted by the caller). */
  etag: string;
}

export interface Storage {
  readonly kind: 'local' | 's3';
  /**
   * Writes a whole object. A stream is written as it arrives, never held whole in memory;
   * `maxBytes` aborts the write (and leaves nothing behind) once exceeded.
   */
  put(
    key: string,
    body: Uint8Array | ReadableStream<Uint8Array>,
    opts: { contentType: string; maxBytes?: number },
  ): Promise<StoredObjectInfo>;
  /** The object's bytes, or one range of them; undefined when there is no such object. */
  read(key: string, range?: ByteRange): Promise<ReadableStream<Uint8Array> | undefined>;
  stat(key: string): Promise<StoredObjectInfo | undefined>;
  delete(key: string): Promise<void>;
}
