// The System page's recent journal fsync figures, as the node's metrics keep them: the last
// minute's fsyncs (at most the latest 4,096), their median, 99th percentile and longest.
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { createNodeMetrics } from '../../lib/metrics/metrics.ts';

afterEach(() => {
  jest.restoreAllMocks();
});

describe('recentJournalFsyncs', () => {
  it('is null before the first fsync', () => {
    expect(createNodeMetrics().recentJournalFsyncs()).toBeNull();
  });

  it('gives the median, the 99th percentile and the longest of the fsyncs, in milliseconds', () => {
    const metrics = createNodeMetrics();
    // 1 … 200 ms, in no order: the nearest-rank median is 100 ms and the 99th percentile 198 ms.
    for (let i = 0; i < 200; i++) metrics.journalSynced((((i * 7) % 200) + 1) / 1000);
    const recent = metrics.recentJournalFsyncs();
    expect(recent).not.toBeNull();
    expect(recent!.fsyncs).toBe(200);
    expect(recent!.p50_ms).toBeCloseTo(100, 9);
    expect(recent!.p99_ms).toBeCloseTo(198, 9);
    expect(recent!.max_ms).toBeCloseTo(200, 9);
  });

  it('forgets fsyncs older than a minute', () => {
    const now = Date.now();
    const clock = jest.spyOn(Date, 'now').mockReturnValue(now);
    const metrics = createNodeMetrics();
    metrics.journalSynced(0.5);
    clock.mockReturnValue(now + 30_000);
    metrics.journalSynced(0.002);
    expect(metrics.recentJournalFsyncs()).toMatchObject({ fsyncs: 2, max_ms: 500 });
    clock.mockReturnValue(now + 61_000);
    expect(metrics.recentJournalFsyncs()).toEqual({ fsyncs: 1, p50_ms: 2, p99_ms: 2, max_ms: 2 });
    clock.mockReturnValue(now + 91_000);
    expect(metrics.recentJournalFsyncs()).toBeNull();
  });

  it('reads only the latest 4,096 fsyncs', () => {
    const metrics = createNodeMetrics();
    for (let i = 0; i < 5000; i++) metrics.journalSynced(i < 904 ? 1 : 0.001);
    // The 904 slow ones came first and were overwritten.
    expect(metrics.recentJournalFsyncs()).toEqual({ fsyncs: 4096, p50_ms: 1, p99_ms: 1, max_ms: 1 });
  });
});
