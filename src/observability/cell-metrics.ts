import type { Registry } from 'prom-client';

/**
 * Counters and histograms for the per-call hot path, exposed through prom-client's registry.
 *
 * prom-client's own `inc`/`observe` validate the label object, hash it and build a closure on
 * every call (about a microsecond each; an LLM call makes eight of them). These keep one cell per
 * label set, found through one map per label by the label's value and validated once when made,
 * so an update is a few map lookups and a few additions. Exposition stays prom-client's: `get()`
 * answers the same structure its Counter and Histogram answer, so `registry.metrics()`, the JSON
 * snapshot and the cross-worker `AggregatorRegistry` merge read them unchanged
 * (tests/unit/cell-metrics.test.ts compares both texts).
 * @see https://github.com/siimon/prom-client/blob/master/lib/histogram.js
 */
type LabelValue = string | number | boolean;
export type LabelSet<N extends string> = Partial<Record<N, LabelValue>>;

interface MetricConfig<N extends string> {
  name: string;
  help: string;
  labelNames: readonly N[];
  registers: Registry[];
}

interface Exported {
  labels: Record<string, LabelValue>;
  value: number;
  metricName?: string;
  /** prom-client's buckets carry `exemplar: null` when exemplars are off; kept for equal snapshots. */
  exemplar?: null;
}

/** The label-set half both kinds share: the lookup by label values, the cells, the one-time validation. */
abstract class CellMetric<N extends string, C> {
  readonly name: string;
  readonly help: string;
  readonly aggregator = 'sum' as const;
  abstract readonly type: 'counter' | 'histogram';
  protected readonly labelNames: readonly N[];
  /** Every cell made, with its labels, for exposition. */
  protected readonly cells: { labels: Record<string, LabelValue>; cell: C }[] = [];
  /** One map level per label name, keyed by the label's value (ABSENT when not given). */
  private readonly tree = new Map<unknown, unknown>();

  constructor(config: MetricConfig<N>) {
    this.name = config.name;
    this.help = config.help;
    this.labelNames = config.labelNames;
    for (const registry of config.registers) registry.registerMetric(this as never);
  }

  protected abstract newCell(): C;

  /**
   * The cell of `labels`; made (and the labels checked) only the first time a set is seen. The
   * lookup walks one map per label by value, so it hashes strings the callers already hold
   * instead of building a key string per update.
   */
  protected cellOf(labels: LabelSet<N>): C {
    let level = this.tree;
    const names = this.labelNames;
    const last = names.length - 1;
    for (let i = 0; i < last; i++) {
      const key = keyOf(labels[names[i] as N]);
      let next = level.get(key) as Map<unknown, unknown> | undefined;
      if (!next) {
        next = new Map();
        level.set(key, next);
      }
      level = next;
    }
    const key = last < 0 ? ABSENT : keyOf(labels[names[last] as N]);
    const found = level.get(key) as C | undefined;
    if (found) return found;
    const cell = this.makeCell(labels);
    level.set(key, cell);
    return cell;
  }

  private makeCell(labels: LabelSet<N>): C {
    for (const name of Object.keys(labels))
      if (!(this.labelNames as readonly string[]).includes(name))
        throw new Error(`Added label "${name}" is not included in initial labelset: ${this.labelNames.join(', ')}`);
    const kept: Record<string, LabelValue> = {};
    for (const name of this.labelNames) if (labels[name] !== undefined) kept[name] = labels[name] as LabelValue;
    const cell = this.newCell();
    this.cells.push({ labels: kept, cell });
    return cell;
  }

  reset(): void {
    this.cells.length = 0;
    this.tree.clear();
  }

  protected abstract values(): Exported[];

  async get() {
    return { name: this.name, help: this.help, type: this.type, values: this.values(), aggregator: this.aggregator };
  }
}

const ABSENT = Symbol('absent');
/** 200 and '200' are one label value, as prom-client's text makes them. */
const keyOf = (value: LabelValue | undefined): unknown =>
  value === undefined ? ABSENT : typeof value === 'string' ? value : String(value);

function finite(value: number): number {
  if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`);
  return value;
}

export class CellCounter<N extends string> extends CellMetric<N, { value: number }> {
  readonly type = 'counter' as const;

  protected newCell() {
    return { value: 0 };
  }

  inc(labels: LabelSet<N>, value = 1): void {
    if (finite(value) < 0) throw new Error('It is not possible to decrease a counter');
    this.cellOf(labels).value += value;
  }

  protected values(): Exported[] {
    return this.cells.map(({ labels, cell }) => ({ labels, value: cell.value }));
  }
}

interface HistogramCell {
  /** Per bucket, not cumulative: bucket i counts values in (bounds[i-1], bounds[i]]. */
  counts: Float64Array;
  sum: number;
  count: number;
}

export class CellHistogram<N extends string> extends CellMetric<N, HistogramCell> {
  readonly type = 'histogram' as const;
  private readonly bounds: readonly number[];

  constructor(config: MetricConfig<N> & { buckets: readonly number[] }) {
    super(config);
    this.bounds = [...config.buckets].sort((a, b) => a - b);
  }

  protected newCell(): HistogramCell {
    return { counts: new Float64Array(this.bounds.length), sum: 0, count: 0 };
  }

  observe(labels: LabelSet<N>, value: number): void {
    // Checked before the cell is found: a refused value must not leave an empty series behind.
    finite(value);
    const cell = this.cellOf(labels);
    cell.sum += value;
    cell.count += 1;
    const bounds = this.bounds;
    for (let i = 0; i < bounds.length; i++)
      if (value <= (bounds[i] as number)) {
        cell.counts[i] = (cell.counts[i] ?? 0) + 1;
        break;
      }
  }

  protected values(): Exported[] {
    const out: Exported[] = [];
    const bucket = `${this.name}_bucket`;
    for (const { labels, cell } of this.cells) {
      let acc = 0;
      this.bounds.forEach((le, i) => {
        acc += cell.counts[i] as number;
        out.push({ labels: { le, ...labels }, value: acc, metricName: bucket, exemplar: null });
      });
      out.push(
        { labels: { le: '+Inf', ...labels }, value: cell.count, metricName: bucket, exemplar: null },
        { labels, value: cell.sum, metricName: `${this.name}_sum` },
        { labels, value: cell.count, metricName: `${this.name}_count` },
      );
    }
    return out;
  }
}
