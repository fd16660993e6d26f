import { randomUUID } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import { mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, sep } from 'node:path';
import { FileTooLargeError, meterStream } from './byte-limit.ts';
import type { ByteRange, Storage, StoredObjectInfo } from './storage.ts';

/** A `.part` file this old was left by a process that died mid-write: no put takes an hour to start over. */
export const STALE_PART_AGE_MS = 3600 * 1000;

/** Keys become file names: nothing that could climb out of the root or hide as a dotfile. */
const SAFE_KEY = /^[A-Za-z0-9_-][A-Za-z0-9._-]{3,199}$/;

/** Makes a directory's entries durable (`fsync` of the directory). */
async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Files on local disk under `DATA_DIR/files`, spread over `ab/cd/<key>` so no directory grows
 * huge. A put writes to `.tmp/` on the same disk and renames into place: readers see the whole
 * file or none of it. Partial writes a crash left in `.tmp/` are swept at start (`sweepStaleParts`).
 * A put returns once the file, its name and any directory it created are on disk, so the row
 * that refers to it (committed after) cannot outlive it in a power loss. `syncDir` is for tests.
 */
export class LocalStorage implements Storage {
  readonly kind = 'local' as const;

  constructor(
    private readonly root: string,
    private readonly syncDir: (dir: string) => Promise<void> = syncDirectory,
  ) {}

  pathOf(key: string): string {
    if (!SAFE_KEY.test(key) || key.includes('..')) throw new Error(`invalid storage key ${JSON.stringify(key)}`);
    return join(this.root, key.slice(0, 2), key.slice(2, 4), key);
  }

  async put(
    key: string,
    body: Uint8Array | ReadableStream<Uint8Array>,
    opts: { contentType: string; maxBytes?: number },
  ): Promise<StoredObjectInfo> {
    const finalPath = this.pathOf(key);
    const finalDir = dirname(finalPath);
    const tmpDir = join(this.root, '.tmp');
    const made = await Promise.all([mkdir(tmpDir, { recursive: true }), mkdir(finalDir, { recursive: true })]);
    // The highest directory this put created on the way to the file (either mkdir may have made the root).
    const created = made
      .filter((dir): dir is string => !!dir && (finalDir === dir || finalDir.startsWith(dir + sep)))
      .sort((a, b) => a.length - b.length)[0];
    const tmpPath = join(tmpDir, `${key}.${randomUUID()}.part`);
    const handle = await open(tmpPath, 'wx');
    try {
      if (body instanceof Uint8Array) {
        if (opts.maxBytes !== undefined && body.byteLength > opts.maxBytes) throw new FileTooLargeError(opts.maxBytes);
        await writeAll(handle, body);
      } else {
        await writePipelined(handle, meterStream(body, { maxBytes: opts.maxBytes }));
      }
      // Durable before it becomes visible: a crash must not leave a renamed but empty file.
      await handle.sync();
    } catch (err) {
      await handle.close();
      await rm(tmpPath, { force: true });
      throw err;
    }
    await handle.close();
    await rename(tmpPath, finalPath);
    // The new name, then each directory this put created, in the directory holding it.
    await this.syncDir(finalDir);
    if (created)
      for (let dir = finalDir; dir !== dirname(created); dir = dirname(dir)) await this.syncDir(dirname(dir));
    const info = await this.stat(key);
    if (!info) throw new Error(`stored file ${key} vanished right after it was written`);
    return info;
  }

  async read(key: string, range?: ByteRange): Promise<ReadableStream<Uint8Array> | undefined> {
    const file = Bun.file(this.pathOf(key));
    if (!(await file.exists())) return undefined;
    return (range ? file.slice(range.start, range.end + 1) : file).stream();
  }

  async stat(key: string): Promise<StoredObjectInfo | undefined> {
    try {
      const s = await stat(this.pathOf(key));
      // Objects are never modified in place (a put renames a new inode over the old one), so
      // size + mtime + inode identify the bytes exactly: a strong validator.
      return {
        size: s.size,
        etag: `${s.size.toString(16)}-${Math.floor(s.mtimeMs).toString(16)}-${s.ino.toString(16)}`,
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }

  /**
   * Removes partial writes (`.tmp/*.part`) older than `olderThanMs`: a crash between open and
   * rename leaves one behind, and nothing else ever would. Younger ones may belong to a put still
   * running on another process sharing the directory, so they stay. Returns how many went.
   */
  async sweepStaleParts(olderThanMs = STALE_PART_AGE_MS, now = Date.now()): Promise<number> {
    const tmpDir = join(this.root, '.tmp');
    let names: string[];
    try {
      names = await readdir(tmpDir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
      throw err;
    }
    let removed = 0;
    for (const name of names) {
      if (!name.endsWith('.part')) continue;
      const path = join(tmpDir, name);
      try {
        const s = await stat(path);
        if (!s.isFile() || now - s.mtimeMs < olderThanMs) continue;
        await rm(path, { force: true });
        removed++;
      } catch (err) {
        // Renamed or removed meanwhile: nothing left to sweep.
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
    }
    return removed;
  }
}

/** `write` may write less than asked; loop until the chunk is on disk. */
async function writeAll(handle: FileHandle, chunk: Uint8Array): Promise<void> {
  let offset = 0;
  while (offset < chunk.byteLength) {
    const { bytesWritten } = await handle.write(chunk, offset, chunk.byteLength - offset);
    offset += bytesWritten;
  }
}

const WRITE_BATCH = 1024 * 1024;

/**
 * Streams to disk in 1 MiB writes with one write in flight while the next batch arrives (and is
 * hashed and metered upstream), instead of awaiting every 64 KiB chunk in turn. At most two
 * batches are held in memory.
 */
async function writePipelined(handle: FileHandle, body: AsyncIterable<Uint8Array>): Promise<void> {
  let batch: Uint8Array[] = [];
  let size = 0;
  let inFlight: Promise<void> = Promise.resolve();
  const flush = async () => {
    const bytes = batch.length === 1 ? (batch[0] as Uint8Array) : Buffer.concat(batch, size);
    batch = [];
    size = 0;
    await inFlight;
    inFlight = writeAll(handle, bytes);
  };
  try {
    for await (const chunk of body) {
      batch.push(chunk);
      size += chunk.byteLength;
      if (size >= WRITE_BATCH) await flush();
    }
    if (size > 0) await flush();
  } finally {
    // Never leave a write running against a handle the caller is about to close.
    await inFlight.catch(() => undefined);
  }
  await inFlight;
}
