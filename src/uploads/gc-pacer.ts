import { edenGC } from 'bun:jsc';

/**
 * Keeps streaming uploads from showing up as memory growth. Every chunk of a request body or
 * download is a fresh buffer that is garbage a moment later, and JavaScriptCore collects by
 * heap-size heuristics: with PGlite's large heap in the process, a 1 GiB upload grew the
 * resident set by 300–500 MB before it collected (bench/uploads.ts).
 *
 * Process-wide, every `checkEvery` bytes of upload traffic the resident set is read (one cheap
 * read of /proc/self/statm). Past `edenAt` of growth over the level left by the last full
 * collection, a young-generation collection (2–4 ms) frees the dead chunks for reuse; past
 * `fullAt` a full one (30–50 ms with PGlite's heap) also hands memory back and resets the level.
 * Memory really in use is unaffected: the level just moves up with it.
 */
export interface GcPacerOptions {
  checkEvery: number;
  edenAt: number;
  fullAt: number;
}

const MB = 1024 * 1024;
const DEFAULTS: GcPacerOptions = { checkEvery: 8 * MB, edenAt: 16 * MB, fullAt: 40 * MB };

export interface Collector {
  eden(): void;
  full(): void;
}

const jsc: Collector = { eden: () => edenGC(), full: () => Bun.gc(true) };

export class GcPacer {
  private sinceCheck = 0;
  private level: number;

  constructor(
    private readonly opts: GcPacerOptions = DEFAULTS,
    private readonly collector: Collector = jsc,
    private readonly rss: () => number = () => process.memoryUsage.rss(),
  ) {
    this.level = rss();
  }

  /** `bytes` more went through an upload. */
  note(bytes: number): void {
    this.sinceCheck += bytes;
    if (this.sinceCheck < this.opts.checkEvery) return;
    this.sinceCheck = 0;
    const growth = this.rss() - this.level;
    if (growth > this.opts.fullAt) {
      this.collector.full();
      this.level = this.rss();
    } else if (growth > this.opts.edenAt) {
      this.collector.eden();
    } else if (growth < 0) {
      // Memory given back elsewhere lowers the level: growth counts from the lowest point.
      this.level += growth;
    }
  }
}

/** One per process: the resident set is the process's. */
export const uploadGcPacer = new GcPacer();
