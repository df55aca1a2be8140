// A duration histogram for what happens on every request (its answer, a store call): prom-client's
// Histogram hashes the labels object, checks each label and keys its buckets by their bound as a
// number turned into text, ~5k instructions an observation, a twentieth of an ingest request. This
// one keys a label set by one string and counts into an array, and gives prom-client's registry the
// same series a Histogram would (the `_bucket` series cumulative, with `le`, then `_sum` and `_count`).
import type { Registry } from 'prom-client';

interface Series {
  labels: Record<string, string>;
  /** Observations per bucket (not cumulative); the last counts those above every bound. */
  counts: Float64Array;
  sum: number;
  count: number;
}

interface ExportedValue {
  labels: Record<string, string | number>;
  value: number;
  metricName: string;
}

export interface DurationHistogramOptions {
  name: string;
  help: string;
  labelNames: readonly string[];
  /** Upper bounds in seconds, ascending. */
  buckets: readonly number[];
  registers: Registry[];
}

export class DurationHistogram {
  readonly name: string;
  readonly help: string;
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  readonly #labelNames: readonly string[];
  readonly #bounds: readonly number[];
  #series = new Map<string, Series>();

  constructor(options: DurationHistogramOptions) {
    this.name = options.name;
    this.help = options.help;
    this.#labelNames = options.labelNames;
    this.#bounds = options.buckets;
    for (const registry of options.registers) registry.registerMetric(this as never);
  }

  /** One observation of `seconds` for the label values, given in the order of `labelNames`. */
  observe(labelValues: readonly string[], seconds: number): void {
    if (!Number.isFinite(seconds)) throw new TypeError(`Value is not a valid number: ${seconds}`);
    const key = labelValues.length === 1 ? labelValues[0] : labelValues.join('\u0000');
    let series = this.#series.get(key);
    if (series === undefined) {
      if (labelValues.length !== this.#labelNames.length) throw new Error(`${this.name} takes ${this.#labelNames.length} label values, not ${labelValues.length}`);
      const labels: Record<string, string> = {};
      this.#labelNames.forEach((name, i) => {
        labels[name] = labelValues[i];
      });
      series = { labels, counts: new Float64Array(this.#bounds.length + 1), sum: 0, count: 0 };
      this.#series.set(key, series);
    }
    let bucket = 0;
    while (bucket < this.#bounds.length && seconds > this.#bounds[bucket]) bucket++;
    series.counts[bucket]++;
    series.sum += seconds;
    series.count++;
  }

  /** The series as prom-client's registry reads a metric. */
  async get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: ExportedValue[] }> {
    const values: ExportedValue[] = [];
    const bucketName = `${this.name}_bucket`;
    for (const series of this.#series.values()) {
      let cumulative = 0;
      this.#bounds.forEach((bound, i) => {
        cumulative += series.counts[i];
        values.push({ labels: { le: bound, ...series.labels }, value: cumulative, metricName: bucketName });
      });
      values.push({ labels: { le: '+Inf', ...series.labels }, value: series.count, metricName: bucketName });
      values.push({ labels: { ...series.labels }, value: series.sum, metricName: `${this.name}_sum` });
      values.push({ labels: { ...series.labels }, value: series.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset(): void {
    this.#series = new Map();
  }
}
