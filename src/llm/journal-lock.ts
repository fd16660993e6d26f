import { readFileSync, statSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { ConfigError } from '../config/config-error.ts';

/** How often the holder touches its lock file, and how old a foreign host's lock must be to be taken. */
const REFRESH_MS = 10_000;
const STALE_MS = 30_000;
/** A takeover takes milliseconds: its guard older than this was left by a process that died in it. */
const TAKEOVER_STALE_MS = 5_000;

/**
 * The lock on one settlement journal file: `<pid>@<host>` in a file beside it, whose
 * modification time its holder keeps fresh. On the same host a lock whose process is gone is
 * taken over at once. A lock written on another host (a journal directory shared between hosts,
 * or a container that came back under a new hostname) cannot be checked that way, so it is taken
 * over only once `STALE_MS` old: a second live host is refused, a dead one's file is replayed
 * half a minute later. Any lock that old is stale, so a pid reused by an unrelated process never
 * blocks a start for good.
 */
export class JournalLock {
  private readonly timer: ReturnType<typeof setInterval>;

  private constructor(private readonly path: string) {
    this.timer = setInterval(() => {
      try {
        const now = new Date();
        utimesSync(path, now, now);
      } catch {
        // Gone or unwritable: the next start on another host may then take it; nothing to do here.
      }
    }, REFRESH_MS);
    this.timer.unref?.();
  }

  /**
   * Takes the lock, or throws a ConfigError naming its live holder. The file is created only
   * where none exists (`wx`), so of two processes starting at once on one directory one gets it.
   * A stale lock is taken over under a second, short-lived lock (`<lock>.takeover`, also `wx`):
   * two processes that both found it stale cannot each remove it and create their own, the
   * second removing the first's fresh lock.
   */
  static take(path: string, what: string, now = Date.now()): JournalLock {
    const me = hostname();
    const inUse = (holder: Holder | 'gone') =>
      new ConfigError(
        `SETTLEMENT_JOURNAL: ${what} is in use by process ${holder === 'gone' ? '?' : (holder.pid ?? '?')} on host ${holder === 'gone' ? '?' : holder.host}; each gateway process needs a journal directory of its own on a disk of its own host (SETTLEMENT_JOURNAL_DIR, DATA_DIR)`,
      );
    if (createExclusive(path, me)) return new JournalLock(path);
    const guard = `${path}.takeover`;
    if (!createExclusive(guard, me)) {
      // Another process is taking it over now; a guard left by one that died mid-way is removed.
      const left = readHolder(guard, me);
      if (left !== 'gone' && Date.now() - left.mtimeMs > TAKEOVER_STALE_MS) removeFile(guard);
      throw inUse(readHolder(path, me));
    }
    try {
      const holder = readHolder(path, me);
      // Fresh, and on this host its process still there (a pid reused by another process ages
      // out too). A fresh file without a pid is one its creator is still writing.
      const live =
        holder !== 'gone' &&
        now - holder.mtimeMs < STALE_MS &&
        (holder.pid === undefined || holder.host !== me || (holder.pid !== process.pid && isAlive(holder.pid)));
      if (live) throw inUse(holder);
      if (holder !== 'gone') removeFile(path);
      if (createExclusive(path, me)) return new JournalLock(path);
      throw inUse(readHolder(path, me));
    } finally {
      removeFile(guard);
    }
  }

  release(): void {
    clearInterval(this.timer);
    try {
      unlinkSync(this.path);
    } catch {
      // already gone: nothing to free
    }
  }
}

interface Holder {
  pid?: number;
  host: string;
  mtimeMs: number;
}

/** Creates `path` with this process's name, only where no file is; false when one is. */
function createExclusive(path: string, me: string): boolean {
  try {
    writeFileSync(path, `${process.pid}@${me}`, { flag: 'wx' });
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

function removeFile(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // already gone
  }
}

/** The lock's holder (no pid: not written yet, or not a lock) and when it was last touched; `gone` when there is no file. */
function readHolder(path: string, me: string): Holder | 'gone' {
  try {
    const mtimeMs = statSync(path).mtimeMs;
    const match = /^(\d+)(?:@(.*))?$/.exec(readFileSync(path, 'utf8').trim());
    return match ? { pid: Number(match[1]), host: match[2] ?? me, mtimeMs } : { host: me, mtimeMs };
  } catch {
    return 'gone';
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
