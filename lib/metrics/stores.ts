// Store calls timed for plumb_store_query_duration_seconds. The node wraps each store once, where
// it opens them, so every service's calls are measured and none of them knows.
import type { AnalyticsStore } from '../stores/analytics/index.ts';
import type { MetadataStore } from '../stores/metadata/index.ts';
import type { NodeMetrics, StoreName } from './metrics.ts';

/** Calls that answer with a promise; streams are left alone (their time is the reader's). */
const TIMED: Record<StoreName, ReadonlySet<string>> = {
  analytics: new Set(['query', 'command', 'insert', 'insertLines']),
  metadata: new Set(['query', 'transaction']),
};

function timed<T extends object>(store: T, name: StoreName, metrics: NodeMetrics): T {
  const operations = TIMED[name];
  return new Proxy(store, {
    get(target, property) {
      const value = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      if (typeof property !== 'string' || !operations.has(property)) return value.bind(target);
      return (...args: unknown[]) => {
        const started = performance.now();
        const done = () => metrics.storeQuery(name, property, (performance.now() - started) / 1000);
        const result = (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        result.then(done, done);
        return result;
      };
    },
  });
}

export const timedAnalytics = (store: AnalyticsStore, metrics: NodeMetrics): AnalyticsStore => timed(store, 'analytics', metrics);
export const timedMetadata = (store: MetadataStore, metrics: NodeMetrics): MetadataStore => timed(store, 'metadata', metrics);
