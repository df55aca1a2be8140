// A quiet thread gives back the memory its JavaScript heap grew into while it was busy. V8 shrinks
// a heap (its young generation's pages, and the pages it pooled for reuse) only in a
// memory-reducing collection, which its memory reducer starts once it sees the allocation rate
// fall. In a node it never saw it fall: traced, it judged the rate high for minutes after a burst
// of ingest had ended, and the node held ~35 MiB of heap on the main thread and ~25 MiB on the
// visit-states worker until it stopped. So each of those threads watches its own isolate, and
// once its event loop has been idle and its heap allocation still for two seconds, with the heap
// 8 MiB above where the last release left it, runs the collection V8 runs under memory pressure
// (docs/decisions.md, "A quiet node gives its JavaScript heap back").
import { performance } from 'node:perf_hooks';
import { getHeapSpaceStatistics, getHeapStatistics } from 'node:v8';
import { exposedGc } from './process-settings.ts';

/** When a release is due. */
export const RELEASE_POLICY = {
  /** How often the thread looks. */
  checkMs: 1_000,
  /** Consecutive quiet looks before a release. */
  quietChecks: 2,
  /** A look is quiet below this share of the time spent running (event-loop utilisation)... */
  busyShare: 0.05,
  /** ...and with less than this allocated in the young generation since the last look. */
  allocatedBytes: 256 * 1024,
  /** How far the heap must have grown past what the last release left. */
  growthBytes: 8 * 1024 * 1024,
  /**
   * The least time between two releases: a release costs the thread ~100 ms (the main thread's
   * heap; ~30–45 ms the worker's), and a thread serving a trickle of requests may look quiet.
   */
  minIntervalMs: 60_000,
} as const;

export type ReleasePolicy = { [K in keyof typeof RELEASE_POLICY]: number };

/** One look at the thread: its share of time running and young-generation allocation since the last look, its heap now. */
export interface Look {
  busyShare: number;
  /** Bytes allocated in the young generation since the last look; negative when a collection emptied it meanwhile. */
  allocatedBytes: number;
  heapBytes: number;
  now: number;
}

/** Decides, look by look, when the heap is released. */
export class QuietWatch {
  private quietLooks = 0;
  private releasedHeapBytes = 0;
  private releasedAt = Number.NEGATIVE_INFINITY;
  private readonly policy: ReleasePolicy;

  constructor(policy: ReleasePolicy = RELEASE_POLICY) {
    this.policy = policy;
  }

  /** Whether to release now. A collection between two looks (negative allocation) means the thread was busy. */
  look({ busyShare, allocatedBytes, heapBytes, now }: Look): boolean {
    const quiet = busyShare < this.policy.busyShare && allocatedBytes >= 0 && allocatedBytes < this.policy.allocatedBytes;
    this.quietLooks = quiet ? this.quietLooks + 1 : 0;
    return this.quietLooks >= this.policy.quietChecks && heapBytes >= this.releasedHeapBytes + this.policy.growthBytes && now - this.releasedAt >= this.policy.minIntervalMs;
  }

  /** A release happened: the heap it left is the new base. */
  released(heapBytes: number, now: number): void {
    this.releasedHeapBytes = heapBytes;
    this.releasedAt = now;
    this.quietLooks = 0;
  }
}

export interface Release {
  beforeBytes: number;
  afterBytes: number;
  ms: number;
}

const mib = (bytes: number) => Math.round(bytes / 104857.6) / 10;

/** A release's figures for a log line, in MiB. */
export const releasedFields = (release: Release) => ({ beforeMiB: mib(release.beforeBytes), afterMiB: mib(release.afterBytes), ms: Math.round(release.ms) });

const heapBytes = () => getHeapStatistics().total_physical_size;
const youngUsedBytes = () => getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_used_size ?? 0;
/** Where a look's figures are counted from: the event loop's times and the young generation's use. */
const mark = () => ({ utilization: performance.eventLoopUtilization(), young: youngUsedBytes() });

/**
 * Watches this thread's heap and releases it when quiet (see the top of this file). Only where
 * `gc()` is exposed, as in a node started by `plumb serve`; elsewhere it answers undefined and
 * does nothing. The timer never keeps a thread alive.
 */
export function releaseMemoryWhenQuiet(onRelease?: (release: Release) => void, policy: ReleasePolicy = RELEASE_POLICY): { stop(): void } | undefined {
  const collect = exposedGc();
  if (!collect) return undefined;
  const watch = new QuietWatch(policy);
  let last = mark();
  const timer = setInterval(() => {
    const current = mark();
    const look = { busyShare: performance.eventLoopUtilization(current.utilization, last.utilization).utilization, allocatedBytes: current.young - last.young, heapBytes: heapBytes(), now: performance.now() };
    last = current;
    if (!watch.look(look)) return;
    const started = performance.now();
    collect({ type: 'major', flavor: 'last-resort' });
    const ms = performance.now() - started;
    const afterBytes = heapBytes();
    watch.released(afterBytes, performance.now());
    // The collection's own work is not the thread's: the next look starts after it.
    last = mark();
    onRelease?.({ beforeBytes: look.heapBytes, afterBytes, ms });
  }, policy.checkMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
