import {
  closeSync,
  constants,
  fdatasync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  openSync,
  readFileSync,
  writeSync,
} from 'node:fs';
import type { SettlementRow } from './llm-settlement.repository.ts';

/** One durable append: the settlement rows of the calls it answered, and when they finished. */
export interface JournalEntry {
  at: string;
  rows: SettlementRow[];
}

/**
 * A segment grows by this much zero-filled space at a time. An append into space that is already
 * the file's, written with zeros and synced, leaves `fdatasync` no size or extent change to
 * commit, as a database's preallocated WAL segments do: p50 0.17 ms per sync instead of 0.20
 * appending (bench/README.md, `bench/durable-write-floor.ts`).
 */
const EXTEND_BYTES = 1024 * 1024;
let zeros: Buffer | undefined;

/**
 * One file of the settlement journal (src/llm/settlement-journal.ts). A line is
 * `{"g":<generation>,"at":…,"rows":[…]}` and a newline; the rest of the file is zeros or what an
 * earlier generation left. A segment is reused from its start under a higher generation once
 * every call in it is settled, without clearing it first: a reader keeps only the lines of the
 * highest generation, so what the last reuse did not overwrite is ignored.
 */
export class JournalSegment {
  /** Where the next line goes. */
  offset = 0;
  /** The generation written now; 0 until the segment is first used. */
  generation = 0;
  /** Calls written here whose database settlement has not finished. */
  pending = 0;
  private allocated: number;

  private constructor(
    private readonly fd: number,
    readonly path: string,
  ) {
    this.allocated = fstatSync(fd).size;
  }

  static open(path: string): JournalSegment {
    // Read and written at positions; never O_APPEND, which would ignore them.
    return new JournalSegment(openSync(path, constants.O_RDWR | constants.O_CREAT, 0o600), path);
  }

  /** The file's size: written lines, zero-filled space, and what earlier generations left. */
  get size(): number {
    return this.allocated;
  }

  /** Writes one line at `offset` (the caller syncs): the space is extended with zeros first when short. */
  write(line: Buffer): void {
    const end = this.offset + line.length;
    if (end > this.allocated) this.extendTo(Math.max(end, this.allocated + EXTEND_BYTES));
    let written = 0;
    while (written < line.length)
      written += writeSync(this.fd, line, written, line.length - written, this.offset + written);
    this.offset = end;
  }

  /** Starts the segment over from its first byte, under `generation`. */
  reuse(generation: number): void {
    this.generation = generation;
    this.offset = 0;
  }

  /**
   * Marks the segment empty for a reader (a zero first byte), without syncing. Best effort: a
   * mark that fails only leaves settled lines for a restart after a crash to look up.
   */
  retire(): void {
    if (this.allocated === 0) return;
    try {
      writeSync(this.fd, Buffer.alloc(1), 0, 1, 0);
    } catch {
      // see above
    }
  }

  /** Resolves once what was written is on disk; on the thread pool, so the event loop goes on. */
  sync(): Promise<void> {
    return new Promise((resolve, reject) => fdatasync(this.fd, (err) => (err ? reject(err) : resolve())));
  }

  /** Empties the file (every call in it settled), durably. */
  empty(): void {
    ftruncateSync(this.fd, 0);
    fsyncSync(this.fd);
    this.allocated = 0;
    this.offset = 0;
    this.generation = 0;
  }

  close(): void {
    closeSync(this.fd);
  }

  private extendTo(size: number): void {
    zeros ??= Buffer.alloc(EXTEND_BYTES);
    for (let at = this.allocated; at < size; ) {
      const n = writeSync(this.fd, zeros, 0, Math.min(zeros.length, size - at), at);
      at += n;
    }
    this.allocated = size;
  }
}

/** What a segment file holds: the entries of its highest generation, in order. */
export interface SegmentContents {
  entries: JournalEntry[];
  generation: number;
  /** Lines among them that could not be read: damage, not a torn last write. */
  unreadable: number;
}

/**
 * Reads a segment file. Lines after the last one of the highest generation are a write that never
 * finished its sync (never answered) or an earlier generation's leftovers: both ignored. A line
 * before it that cannot be read, or is of another generation, is damage: counted.
 */
export function readSegment(path: string): SegmentContents {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { entries: [], generation: 0, unreadable: 0 };
    throw err;
  }
  const zero = bytes.indexOf(0);
  const text = (zero === -1 ? bytes : bytes.subarray(0, zero)).toString('utf8');
  const lines = text.split('\n');
  // A last piece without its newline never finished its write.
  lines.pop();
  const parsed = lines.map(parseLine);
  let generation = -1;
  for (const p of parsed) if (p && p.g > generation) generation = p.g;
  if (generation < 0) return { entries: [], generation: 0, unreadable: 0 };
  let last = -1;
  parsed.forEach((p, i) => {
    if (p?.g === generation) last = i;
  });
  const entries: JournalEntry[] = [];
  let unreadable = 0;
  for (let i = 0; i <= last; i++) {
    const p = parsed[i];
    if (p?.g === generation) entries.push({ at: p.at, rows: p.rows });
    else unreadable++;
  }
  return { entries, generation, unreadable };
}

function parseLine(line: string): { g: number; at: string; rows: SettlementRow[] } | undefined {
  if (line === '') return undefined;
  try {
    const entry = JSON.parse(line) as { g?: unknown; at?: unknown; rows?: unknown };
    // Lines of the first format had no generation: they read as generation 0.
    const g = entry.g ?? 0;
    if (typeof g === 'number' && Number.isSafeInteger(g) && typeof entry.at === 'string' && Array.isArray(entry.rows))
      return { g, at: entry.at, rows: entry.rows as SettlementRow[] };
  } catch {
    // not a line: counted by the caller where it matters
  }
  return undefined;
}
