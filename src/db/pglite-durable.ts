import { PGlite } from '@electric-sql/pglite';
import { NodeFS } from '@electric-sql/pglite/nodefs';
import { closeSync, fdatasyncSync, openSync } from 'node:fs';
import { join } from 'node:path';

/**
 * PGlite as durable as Postgres: a commit is on disk, not only handed to the OS, before it is
 * acknowledged. PGlite starts Postgres with fsync off (`-F` in its default start parameters),
 * and under it Emscripten's Node file system has no `fsync` for Postgres to call, and makes
 * `fdatasync` a no-op. So: `-F` is dropped, Postgres is told to sync with `fsync()` (which reaches
 * the file system's stream operations), and the mount (`DurableNodeFS`) gets one that syncs the
 * real file, installed before Postgres starts so that its start-up (a crash recovery included)
 * is synced too.
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

type PostgresMod = Parameters<NodeFS['init']>[1];

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
interface EmscriptenModule {
  NODEFS: { stream_ops: Record<string, unknown> };
  FS: { ErrnoError: new (errno: number) => Error };
}

/** Emscripten's errno for EIO: Postgres treats a failed fsync as fatal, as it must. */
const EMSCRIPTEN_EIO = 29;

/** PGlite's Node file system whose `fsync` reaches the disk. `sync` is for tests. */
export class DurableNodeFS extends NodeFS {
  constructor(
    dataDir: string,
    private readonly sync: (fd: number) => void = fdatasyncSync,
  ) {
    super(dataDir);
  }

  override async init(pg: PGlite, opts: PostgresMod) {
    const { emscriptenOpts } = await super.init(pg, opts);
    const installSync = (mod: EmscriptenModule) => {
      mod.NODEFS.stream_ops.fsync = (stream: EmscriptenStream) => this.syncStream(stream, mod);
    };
    const preRun = [...(emscriptenOpts.preRun ?? []), installSync] as PostgresMod['preRun'];
    return { emscriptenOpts: { ...emscriptenOpts, preRun } };
  }

  private syncStream(stream: EmscriptenStream, mod: EmscriptenModule): void {
    try {
      if (typeof stream.nfd === 'number') {
        this.sync(stream.nfd);
        return;
      }
      // Directories (Postgres syncs them after creating or renaming a file) have no descriptor here.
      const fd = openSync(hostPath(stream.node), 'r');
      try {
        this.sync(fd);
      } finally {
        closeSync(fd);
      }
    } catch {
      throw new mod.FS.ErrnoError(EMSCRIPTEN_EIO);
    }
  }
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
