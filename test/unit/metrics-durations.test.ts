// The duration histogram behind the request and store-call series of GET /metrics.
import { describe, expect, it } from '@jest/globals';
import { Histogram, Registry } from 'prom-client';
import { DurationHistogram } from '../../lib/metrics/durations.ts';

const BUCKETS = [0.001, 0.01, 0.1, 1];
const OBSERVATIONS: [string[], number][] = [
  [['POST', '/ingest', '202'], 0.0004],
  [['POST', '/ingest', '202'], 0.001],
  [['POST', '/ingest', '202'], 0.05],
  [['GET', '/api/sites/:id/stats/kpis', '200'], 0.2],
  [['GET', '/api/sites/:id/stats/kpis', '200'], 3],
  [['POST', '/ingest', '400'], 0.002],
];

/** The same observations through prom-client's Histogram and through DurationHistogram, each in a registry of its own. */
function both() {
  const options = { name: 'plumb_test_duration_seconds', help: 'Durations of things', labelNames: ['method', 'route', 'status'], buckets: BUCKETS };
  const theirs = new Registry();
  const ours = new Registry();
  const reference = new Histogram({ ...options, registers: [theirs] });
  const histogram = new DurationHistogram({ ...options, registers: [ours] });
  for (const [[method, route, status], seconds] of OBSERVATIONS) {
    reference.observe({ method, route, status }, seconds);
    histogram.observe([method, route, status], seconds);
  }
  return { theirs, ours, histogram };
}

describe('DurationHistogram', () => {
  it("exposes the same series as prom-client's Histogram: cumulative buckets with le (a value on a bound counts in it), +Inf, sum and count", async () => {
    const { theirs, ours } = both();
    expect(await ours.metrics()).toBe(await theirs.metrics());
    expect(await ours.metrics()).toContain('plumb_test_duration_seconds_bucket{le="0.001",method="POST",route="/ingest",status="202"} 2');
    // As JSON too, but for exemplars, which it never has.
    const withoutExemplars = (metrics: unknown) => JSON.parse(JSON.stringify(metrics, (key, value) => (key === 'exemplar' ? undefined : value)));
    expect(await ours.getMetricsAsJSON()).toEqual(withoutExemplars(await theirs.getMetricsAsJSON()));
  });

  it('starts again from nothing when its registry is reset', async () => {
    const { ours, histogram } = both();
    ours.resetMetrics();
    histogram.observe(['GET', '/', '200'], 0.5);
    expect(await ours.metrics()).toContain('plumb_test_duration_seconds_count{method="GET",route="/",status="200"} 1');
    expect(await ours.metrics()).not.toContain('/ingest');
  });

  it('refuses a value that is not a finite number, and label values of the wrong count', () => {
    const { histogram } = both();
    expect(() => histogram.observe(['GET', '/', '200'], Number.NaN)).toThrow(TypeError);
    expect(() => histogram.observe(['GET', '/'], 0.1)).toThrow(/takes 3 label values, not 2/);
  });
});
