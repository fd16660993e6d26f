import { closeSync, copyFileSync, fsyncSync, mkdirSync, openSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { JournalLock } from './journal-lock.ts';
import { type JournalEntry, JournalSegment, readSegment } from './journal-segment.ts';

export type { JournalEntry } from './journal-segment.ts';

/**
 * Past this size the next append moves to the other segment, if every call there is settled
 * (`SETTLEMENT_JOURNAL_SEGMENT_BYTES`).
 */
export const SEGMENT_BYTES = 4 * 1024 * 1024;

/**
 * The settlement journal (docs/money.md, "The settlement journal"): local files in which a process
 * writes each group of finished calls' settlement rows, `fdatasync`ed, before those calls are
 * answered; the database settlement follows after the answer. A process killed in between leaves
 * the rows here, and the next process of the same worker slot settles them before it serves (the
 * settlement is idempotent by task id, so a row settled already moves no money).
 *
 * Two segments per worker slot, `settlements-<slot>.log` and `settlements-<slot>.1.log`
 * (src/llm/journal-segment.ts), held by one process at a time through `settlements-<slot>.lock`
 * (src/llm/journal-lock.ts). Appends go to one segment until it passes `SEGMENT_BYTES`, then to
 * the other from its start once every call written there is settled: under steady traffic some
 * calls are always unsettled, so one file could never be emptied, and two bound the disk used.
 */
export class SettlementJournal {
  private readonly segments: [JournalSegment, JournalSegment];
  private active = 0;
  private ready = false;
  /** A record may be only here (its settlement and its dead letter both failed): nothing is reused. */
  private keeping = false;

  private constructor(
    paths: [string, string],
    private readonly lock: JournalLock,
    /** What the previous process of this slot left: entries not known to be settled. */
    readonly leftOver: JournalEntry[],
    /** For logs: the slot's first segment. */
    readonly path: string,
    /** Lines that could not be read (a torn last write is not counted). */
    readonly unreadable: number,
    /** Where the files with such lines were copied before the journal went on. */
    readonly damagedCopies: string[],
    private readonly segmentBytes: number,
  ) {
    this.segments = [JournalSegment.open(paths[0]), JournalSegment.open(paths[1])];
  }

  /** `segmentBytes`: when to move to the other segment (smaller in tests). */
  static open(dir: string, slot: number, segmentBytes = SEGMENT_BYTES): SettlementJournal {
    mkdirSync(dir, { recursive: true });
    const lock = JournalLock.take(join(dir, `settlements-${slot}.lock`), `${dir} slot ${slot}`);
    const paths: [string, string] = [join(dir, `settlements-${slot}.log`), join(dir, `settlements-${slot}.1.log`)];
    const contents = paths.map(readSegment);
    const damagedCopies = paths.flatMap((path, i) => (contents[i]?.unreadable ? [keepCopy(path)] : []));
    // The older generation first: the order the calls were journaled in.
    const leftOver = [...contents].sort((a, b) => a.generation - b.generation).flatMap((c) => c.entries);
    const unreadable = contents.reduce((n, c) => n + c.unreadable, 0);
    const journal = new SettlementJournal(paths, lock, leftOver, paths[0], unreadable, damagedCopies, segmentBytes);
    // The files' names must survive a crash as well as their bytes.
    syncDirectory(dir);
    return journal;
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
    const slots = new Set(names.map((name) => Number(/^settlements-(\d+)(?:\.1)?\.log$/.exec(name)?.[1] ?? -1)));
    return [...slots].filter((slot) => slot >= workers).map((slot) => SettlementJournal.open(dir, slot));
  }

  /** Once `leftOver` is settled: both segments emptied, and appends may start. */
  reset(): void {
    for (const segment of this.segments) segment.empty();
    this.active = 0;
    this.ready = true;
  }

  /**
   * Appends the rows of `calls` finished calls (`rowsJson`, encoded by the caller so that a value
   * JSON cannot hold fails there, not as a write) and resolves once they are on disk, with the
   * segment to name in `settled` as each call's database settlement finishes. Callers serialise
   * appends.
   */
  async append(at: string, rowsJson: string, calls: number): Promise<number> {
    if (!this.ready) throw new Error('settlement journal appended to before its left-over calls were settled');
    let index = this.active;
    let segment = this.segments[index] as JournalSegment;
    // The bound is soft: the rows' length in characters stands for their bytes.
    if (segment.offset > 0 && segment.offset + rowsJson.length > this.segmentBytes) {
      const other = this.segments[1 - index] as JournalSegment;
      if (other.pending === 0 && !this.keeping) {
        other.reuse(segment.generation + 1);
        // Left with every call settled already: marked empty now (otherwise by `settled`).
        if (segment.pending === 0) segment.retire();
        index = this.active = 1 - index;
        segment = other;
      }
    }
    if (segment.generation === 0) segment.reuse(1);
    segment.write(Buffer.from(`{"g":${segment.generation},"at":${JSON.stringify(at)},"rows":${rowsJson}}\n`));
    segment.pending += calls;
    await segment.sync();
    return index;
  }

  /** What the two segment files take on disk. */
  get fileBytes(): number {
    return this.segments[0].size + this.segments[1].size;
  }

  /** One call written to `segment` is settled (or set aside) in the database. */
  settled(segment: number): void {
    const s = this.segments[segment] as JournalSegment;
    // A segment left behind and now all settled is marked empty (not synced: read again after a
    // crash, its calls move no money), so a restart does not replay it call by call.
    if (--s.pending === 0 && segment !== this.active && !this.keeping) s.retire();
  }

  /** From now on nothing is reused or emptied: a record may be only here. */
  keepAll(): void {
    this.keeping = true;
  }

  /** Closes the files and frees the slot; `settled`: every entry is in the database, so none is kept. */
  close(settled: boolean): void {
    for (const segment of this.segments) {
      if (settled && !this.keeping) segment.empty();
      segment.close();
    }
    this.lock.release();
  }
}

/** A copy of a segment with damaged lines, for an operator: the journal itself goes on. */
function keepCopy(path: string): string {
  const copy = `${path}.damaged-${Date.now()}`;
  copyFileSync(path, copy);
  const fd = openSync(copy, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return copy;
}

function syncDirectory(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
