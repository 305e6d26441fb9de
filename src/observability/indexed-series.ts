import type { Metric, Registry } from 'prom-client';

/**
 * Counters and histograms updated on every request and every run, kept outside prom-client's own classes.
 *
 * Why: prom-client's `observe({ listener, method, route, status }, v)` builds a label object, validates it and joins
 * its values into a key string on every call: ~1 us of the accept's ~50 us (2% of its CPU in the profiles), and ~1%
 * of a synchronous run's (its task, LLM and tool metrics). Here the label values find their series through one small
 * map per label (a status stays the number it is, no string built), and an observation is three adds. The registry
 * formats what `get()`/`getForPromString()` return exactly as it formats its own histograms and counters, so the
 * exposition text is the same line for line. Label values are given in the order of `labelNames`.
 */

/** Label values in the order of the metric's label names; a number is shown as its decimal text. */
export type LabelValues = readonly (string | number)[];

/** Series by their label values: a map per label, the last one holding the series. */
class SeriesIndex<S> {
  private root = new Map<string | number, unknown>();
  readonly all: S[] = [];
  /** Moves on every clear: a bound series (`bind`) looks itself up again. */
  generation = 0;

  constructor(
    private readonly labelNames: readonly string[],
    private readonly make: (labels: Record<string, string>) => S,
  ) {}

  get(values: LabelValues): S {
    let level = this.root;
    const last = this.labelNames.length - 1;
    for (let i = 0; i < last; i++) {
      let next = level.get(values[i]!) as Map<string | number, unknown> | undefined;
      if (!next) level.set(values[i]!, (next = new Map()));
      level = next;
    }
    let series = level.get(values[last]!) as S | undefined;
    if (!series) {
      const labels: Record<string, string> = {};
      this.labelNames.forEach((n, i) => (labels[n] = String(values[i])));
      series = this.make(labels);
      level.set(values[last]!, series);
      this.all.push(series);
    }
    return series;
  }

  clear(): void {
    this.root = new Map();
    this.all.length = 0;
    this.generation++;
  }
}

interface HistogramSeries {
  labels: Record<string, string>;
  /** Observations per bucket (not cumulative), the last one past every bound. */
  counts: Float64Array;
  sum: number;
  count: number;
}

interface Named {
  name: string;
  help: string;
  labelNames: readonly string[];
  registers: Registry[];
}

function register(metric: object, registries: Registry[]): void {
  for (const r of registries) r.registerMetric(metric as Metric);
}

export class IndexedHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  readonly name: string;
  readonly help: string;
  private readonly bounds: readonly number[];
  private readonly series: SeriesIndex<HistogramSeries>;

  constructor(o: Named & { buckets: readonly number[] }) {
    this.name = o.name;
    this.help = o.help;
    this.bounds = [...o.buckets].sort((a, b) => a - b);
    this.series = new SeriesIndex(o.labelNames, (labels) => ({ labels, counts: new Float64Array(this.bounds.length + 1), sum: 0, count: 0 }));
    register(this, o.registers);
  }

  observe(values: LabelValues, value: number): void {
    // A metric never fails the request it measures: an impossible duration is not recorded (nor its series made).
    if (Number.isFinite(value)) this.record(this.series.get(values), value);
  }

  /**
   * `observe` with the label values fixed, for a caller that records one series over and over (the webhook lane's
   * 200s): no label lookups. The series is found at the first observation (so it is not shown before one) and again
   * after a reset.
   */
  bind(values: LabelValues): (value: number) => void {
    let s: HistogramSeries | undefined;
    let generation = -1;
    return (value) => {
      if (!Number.isFinite(value)) return;
      if (generation !== this.series.generation) {
        s = this.series.get(values);
        generation = this.series.generation;
      }
      this.record(s!, value);
    };
  }

  private record(s: HistogramSeries, value: number): void {
    let b = 0;
    while (b < this.bounds.length && value > this.bounds[b]!) b++;
    s.counts[b]!++;
    s.sum += value;
    s.count++;
  }

  /** As prom-client's histograms give it to the text format: `le` in the labels, the series' labels shared. */
  getForPromString() {
    const values: { labels: Record<string, string | number>; sharedLabels: Record<string, string>; value: number; metricName: string }[] = [];
    const bucket = `${this.name}_bucket`;
    for (const s of this.series.all) {
      let acc = 0;
      this.bounds.forEach((le, i) => {
        acc += s.counts[i]!;
        values.push({ labels: { le }, sharedLabels: s.labels, value: acc, metricName: bucket });
      });
      values.push(
        { labels: { le: '+Inf' }, sharedLabels: s.labels, value: s.count, metricName: bucket },
        { labels: {}, sharedLabels: s.labels, value: s.sum, metricName: `${this.name}_sum` },
        { labels: {}, sharedLabels: s.labels, value: s.count, metricName: `${this.name}_count` },
      );
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** As prom-client's `get()` (getMetricsAsJSON): every value with its whole label set. */
  get() {
    const m = this.getForPromString();
    return { ...m, values: m.values.map(({ labels, sharedLabels, value, metricName }) => ({ labels: { ...sharedLabels, ...labels }, value, metricName })) };
  }

  reset(): void {
    this.series.clear();
  }
}

export class IndexedCounter {
  readonly type = 'counter';
  readonly aggregator = 'sum';
  readonly name: string;
  readonly help: string;
  private readonly series: SeriesIndex<{ labels: Record<string, string>; value: number }>;

  constructor(o: Named) {
    this.name = o.name;
    this.help = o.help;
    this.series = new SeriesIndex(o.labelNames, (labels) => ({ labels, value: 0 }));
    register(this, o.registers);
  }

  inc(values: LabelValues, by = 1): void {
    // As prom-client: a counter only goes up.
    if (!(by >= 0) || !Number.isFinite(by)) throw new Error(`a counter increases by a finite amount >= 0, not ${by}`);
    this.series.get(values).value += by;
  }

  /** `inc` with the label values fixed (see IndexedHistogram.bind). */
  bind(values: LabelValues): () => void {
    let s: { value: number } | undefined;
    let generation = -1;
    return () => {
      if (generation !== this.series.generation) {
        s = this.series.get(values);
        generation = this.series.generation;
      }
      s!.value++;
    };
  }

  get() {
    return { name: this.name, help: this.help, type: this.type, values: this.series.all.map((s) => ({ labels: s.labels, value: s.value })), aggregator: this.aggregator };
  }

  reset(): void {
    this.series.clear();
  }
}
