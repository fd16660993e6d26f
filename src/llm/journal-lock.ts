import { readFileSync, statSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { ConfigError } from '../config/config-error.ts';

/** How often the holder touches its lock file, and how old a foreign host's lock must be to be taken. */
const REFRESH_MS = 10_000;
const STALE_MS = 30_000;

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
   * where none exists (`wx`), so of two processes starting at once on one directory, one gets
   * it and the other is refused; a stale lock is removed first, and if another process creates
   * the file in between, that one holds it.
   */
  static take(path: string, what: string, now = Date.now()): JournalLock {
    const me = hostname();
    for (let attempt = 0; ; attempt++) {
      try {
        writeFileSync(path, `${process.pid}@${me}`, { flag: 'wx' });
        return new JournalLock(path);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const holder = readHolder(path, me);
      if (holder === 'gone') {
        if (attempt < 3) continue;
        throw new ConfigError(`SETTLEMENT_JOURNAL: ${what} could not be locked (its lock file keeps changing)`);
      }
      // Fresh, and on this host its process still there (a pid reused by another process ages
      // out too). A fresh file without a pid is one its creator is still writing.
      const live =
        now - holder.mtimeMs < STALE_MS &&
        (holder.pid === undefined || holder.host !== me || (holder.pid !== process.pid && isAlive(holder.pid)));
      if (live || attempt > 0)
        throw new ConfigError(
          `SETTLEMENT_JOURNAL: ${what} is in use by process ${holder.pid ?? '?'} on host ${holder.host}; each gateway process needs a journal directory of its own on a disk of its own host (SETTLEMENT_JOURNAL_DIR, DATA_DIR)`,
        );
      try {
        unlinkSync(path);
      } catch {
        // another process removed it first: the next try finds out who holds it now
      }
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

/** The lock's holder (no pid: not written yet, or not a lock) and when it was last touched; `gone` when there is no file. */
function readHolder(path: string, me: string): { pid?: number; host: string; mtimeMs: number } | 'gone' {
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
