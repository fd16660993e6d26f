import {
  closeSync,
  fdatasync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { JournalLock } from './journal-lock.ts';
import type { SettlementRow } from './llm-settlement.repository.ts';

/** One durable append: the settlement rows of the calls it answered, and when they finished. */
export interface JournalEntry {
  at: string;
  rows: SettlementRow[];
}

/** Past this size the file is emptied at the next append that finds every entry settled. */
const TRUNCATE_AT_BYTES = 4 * 1024 * 1024;

/**
 * The settlement journal (docs/money.md, "The settlement journal"): an append-only file on local
 * disk in which a process writes each group of finished calls' settlement rows, `fdatasync`ed,
 * before those calls are answered; the database settlement follows after the answer. A process
 * killed in between leaves the rows here, and the next process of the same worker slot settles
 * them before it serves (the settlement is idempotent by task id, so a row settled already moves
 * no money).
 *
 * One file per worker slot, `settlements-<slot>.log`, held by one process at a time through
 * `settlements-<slot>.lock` (src/llm/journal-lock.ts). A line is `{"at", "rows"}` in JSON and a newline; a last line without its newline is
 * a write that never finished its sync, so no call of it was answered: it is cut off.
 */
export class SettlementJournal {
  private size: number;

  private constructor(
    private readonly fd: number,
    private readonly lock: JournalLock,
    /** What the previous process of this slot left: entries not known to be settled. */
    readonly leftOver: JournalEntry[],
    readonly path: string,
    /** Lines that could not be read (a torn last line is not counted). */
    readonly unreadable: number,
  ) {
    this.size = fstatSync(fd).size;
  }

  static open(dir: string, slot: number): SettlementJournal {
    mkdirSync(dir, { recursive: true });
    const lockPath = join(dir, `settlements-${slot}.lock`);
    const lock = JournalLock.take(lockPath, `${dir} slot ${slot}`);
    const path = join(dir, `settlements-${slot}.log`);
    const { entries, unreadable, validBytes } = readEntries(path);
    const fd = openSync(path, 'a');
    // A torn last line is cut off, so the next append starts a line of its own.
    if (fstatSync(fd).size > validBytes) {
      ftruncateSync(fd, validBytes);
      fsyncSync(fd);
    }
    // The file's name must survive a crash as well as its bytes.
    syncDirectory(dir);
    return new SettlementJournal(fd, lock, entries, path, unreadable);
  }

  /**
   * The journals of slots at or above `workers`, left by a run with more workers than this one:
   * the primary opens (locks) them so that their calls are settled too.
   */
  static openOrphans(dir: string, workers: number): SettlementJournal[] {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return [];
    }
    return names.flatMap((name) => {
      const slot = Number(/^settlements-(\d+)\.log$/.exec(name)?.[1] ?? Number.NaN);
      return slot >= workers ? [SettlementJournal.open(dir, slot)] : [];
    });
  }

  /**
   * Appends one entry, given as its JSON text (the caller encodes it, so a value JSON cannot hold
   * fails there and not as a write), and resolves once it is on disk. `canTruncate`: every entry
   * written before is settled in the database, so a large file may be emptied first. Callers
   * serialise appends.
   */
  async append(entryJson: string, canTruncate: boolean): Promise<void> {
    if (canTruncate && this.size > TRUNCATE_AT_BYTES) this.truncate();
    const bytes = Buffer.from(`${entryJson}\n`);
    let written = 0;
    while (written < bytes.length) written += writeSync(this.fd, bytes, written);
    this.size += bytes.length;
    // On the thread pool: the event loop goes on serving while the disk flushes.
    await new Promise<void>((resolve, reject) => fdatasync(this.fd, (err) => (err ? reject(err) : resolve())));
  }

  /** Empties the file: only when every entry in it is settled. */
  truncate(): void {
    ftruncateSync(this.fd, 0);
    fsyncSync(this.fd);
    this.size = 0;
  }

  /** Closes the file and frees the slot; `settled`: every entry is in the database, so none is kept. */
  close(settled: boolean): void {
    if (settled) this.truncate();
    closeSync(this.fd);
    this.lock.release();
  }
}

function readEntries(path: string): { entries: JournalEntry[]; unreadable: number; validBytes: number } {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { entries: [], unreadable: 0, validBytes: 0 };
    throw err;
  }
  const validBytes = bytes.lastIndexOf(10) + 1;
  const lines = bytes.subarray(0, validBytes).toString('utf8').split('\n');
  const entries: JournalEntry[] = [];
  let unreadable = 0;
  for (const line of lines) {
    if (line === '') continue;
    try {
      const entry = JSON.parse(line) as JournalEntry;
      if (typeof entry.at === 'string' && Array.isArray(entry.rows)) {
        entries.push(entry);
        continue;
      }
    } catch {
      // counted below
    }
    unreadable++;
  }
  return { entries, unreadable, validBytes };
}

function syncDirectory(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
