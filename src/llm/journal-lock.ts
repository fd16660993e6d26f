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

  /** Takes the lock, or throws a ConfigError naming its live holder. */
  static take(path: string, what: string, now = Date.now()): JournalLock {
    const me = hostname();
    let holder: { pid: number; host: string } | undefined;
    let age = Number.POSITIVE_INFINITY;
    try {
      const match = /^(\d+)(?:@(.*))?$/.exec(readFileSync(path, 'utf8').trim());
      if (match) holder = { pid: Number(match[1]), host: match[2] ?? me };
      age = now - statSync(path).mtimeMs;
    } catch {
      // no lock yet
    }
    if (holder) {
      // Fresh, and on this host its process still there (a pid reused by another process ages out too).
      const live = age < STALE_MS && (holder.host !== me || (holder.pid !== process.pid && isAlive(holder.pid)));
      if (live)
        throw new ConfigError(
          `SETTLEMENT_JOURNAL: ${what} is in use by process ${holder.pid} on host ${holder.host}; each gateway process needs a journal directory of its own on a disk of its own host (SETTLEMENT_JOURNAL_DIR, DATA_DIR)`,
        );
    }
    writeFileSync(path, `${process.pid}@${me}`);
    return new JournalLock(path);
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

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
