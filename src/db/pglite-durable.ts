import { PGlite } from '@electric-sql/pglite';
import { closeSync, fdatasyncSync, openSync } from 'node:fs';
import { join } from 'node:path';

/**
 * PGlite as durable as Postgres: a commit is on disk, not only handed to the OS, before it is
 * acknowledged. PGlite starts Postgres with fsync off (`-F` in its default start parameters),
 * and under it Emscripten's Node file system has no `fsync` for Postgres to call, and makes
 * `fdatasync` a no-op. So: `-F` is dropped, Postgres is told to sync with `fsync()` (which reaches
 * the file system's stream operations), and those get one that syncs the real file.
 *
 * Cost (docs/operations.md): one `fdatasync` per commit of the WAL, in the database's own thread
 * (src/db/pglite-worker.ts), plus the data files at each checkpoint.
 */
export const DURABLE_START_PARAMS = [
  ...PGlite.defaultStartParams.filter((param) => param !== '-F'),
  '-c',
  'fsync=on',
  '-c',
  'wal_sync_method=fsync',
];

/** Emscripten's view of one open file or directory of a Node-backed mount. */
interface EmscriptenStream {
  nfd?: number;
  node: EmscriptenNode;
}
interface EmscriptenNode {
  name: string;
  parent: EmscriptenNode;
  mount: { opts: { root?: string } };
}
interface EmscriptenFs {
  lookupPath(path: string): { node: { stream_ops: Record<string, unknown> } };
  ErrnoError: new (errno: number) => Error;
}

/** Emscripten's errno for EIO: Postgres treats a failed fsync as fatal, as it must. */
const EMSCRIPTEN_EIO = 29;

/**
 * Installs the sync on the Node mount holding the data directory. Call after `waitReady`: what
 * Postgres wrote before (start-up) was synced by nothing, as before; every commit after is.
 * `sync` is for tests.
 */
export function syncWritesToDisk(pg: PGlite, sync: (fd: number) => void = fdatasyncSync): void {
  const fs = (pg as unknown as { Module: { FS: EmscriptenFs } }).Module.FS;
  const ops = fs.lookupPath(`${PGlite.paths.PGDATA}/PG_VERSION`).node.stream_ops;
  ops.fsync = (stream: EmscriptenStream) => {
    try {
      if (typeof stream.nfd === 'number') return sync(stream.nfd);
      // Directories (Postgres syncs them after creating or renaming a file) have no descriptor here.
      const fd = openSync(hostPath(stream.node), 'r');
      try {
        sync(fd);
      } finally {
        closeSync(fd);
      }
    } catch {
      throw new fs.ErrnoError(EMSCRIPTEN_EIO);
    }
  };
}

/** The host path of a node of a Node-backed mount: its names up to the mount's root, under the mount's host directory. */
function hostPath(node: EmscriptenNode): string {
  const names: string[] = [];
  let at = node;
  while (at.parent !== at) {
    names.push(at.name);
    at = at.parent;
  }
  return join(at.mount.opts.root ?? '/', ...names.reverse());
}
