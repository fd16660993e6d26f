import { createHistogram, type RecordableHistogram } from 'node:perf_hooks';

/** How often the loop is sampled while the gateway is busy. */
const SAMPLE_EVERY_MS = 50;
/** Samples in a row with no request between them after which the sampler rests (2 s). */
const QUIET_SAMPLES_BEFORE_REST = 40;

/** What a scrape reads: the delays seen since the last one, in seconds. */
export interface LagFigures {
  min: number;
  max: number;
  mean: number;
  stddev: number;
  p50: number;
  p90: number;
  p99: number;
}

/**
 * How late the event loop runs a timer due every 50 ms, sampled only while requests arrive.
 *
 * prom-client's own lag figures come from a timer that never stops: an idle gateway woke 20 times
 * a second for it, most of its wake-ups and a third of its CPU at rest (bench/README.md), to
 * report the delay of a loop with nothing to delay. Here each request marks the sampler busy (a
 * flag) and restarts it if it rested; after 2 s without a request it stops until the next.
 * A stall of 50 ms or more while busy always shows; at rest nothing is sampled and a scrape
 * reads 0. The figure is the delay past the timer's due time, as Bun's own
 * `monitorEventLoopDelay` reports it.
 */
export class EventLoopLag {
  private readonly histogram: RecordableHistogram = createHistogram();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private dueAt = 0;
  /** Whether a request arrived since the last sample. */
  private requested = false;
  private quietSamples = 0;

  constructor(
    private readonly everyMs = SAMPLE_EVERY_MS,
    private readonly quietSamplesBeforeRest = QUIET_SAMPLES_BEFORE_REST,
  ) {}

  /** A request arrived: on the request path, so only a flag and, after a rest, a timer. */
  busy(): void {
    this.requested = true;
    if (this.timer === undefined) this.schedule(performance.now());
  }

  /** Whether the sampler is running (false at rest). */
  get sampling(): boolean {
    return this.timer !== undefined;
  }

  /** The figures since the last read, then starts afresh; all 0 when nothing was sampled. */
  read(): LagFigures {
    const h = this.histogram;
    const seconds = (ns: number) => ns / 1e9;
    // A percentile is its bucket's upper bound, which can pass the largest delay recorded.
    const percentile = (p: number) => seconds(Math.min(Math.max(h.percentile(p), h.min), h.max));
    const figures =
      h.count === 0
        ? { min: 0, max: 0, mean: 0, stddev: 0, p50: 0, p90: 0, p99: 0 }
        : {
            min: seconds(h.min),
            max: seconds(h.max),
            mean: seconds(h.mean),
            stddev: seconds(h.stddev),
            p50: percentile(50),
            p90: percentile(90),
            p99: percentile(99),
          };
    h.reset();
    return figures;
  }

  /** Stops sampling (shutdown, tests). */
  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(now: number): void {
    this.dueAt = now + this.everyMs;
    this.timer = setTimeout(this.sample, this.everyMs);
    // Never what keeps a process alive.
    this.timer.unref?.();
  }

  private readonly sample = (): void => {
    const now = performance.now();
    // The histogram takes whole nanoseconds of at least 1.
    this.histogram.record(Math.max(1, Math.round((now - this.dueAt) * 1e6)));
    if (this.requested) this.quietSamples = 0;
    else if (++this.quietSamples >= this.quietSamplesBeforeRest) {
      this.timer = undefined;
      this.quietSamples = 0;
      return;
    }
    this.requested = false;
    this.schedule(now);
  };
}
