// What a node tells Prometheus about itself (GET /metrics): requests, ingest, the journal, store
// queries, webhook deliveries, mail, leadership, and the Node process. One registry per node, never
// prom-client's global one: tests run several nodes in one process. Counters and histograms are
// moved where things happen (cheap: a map lookup and an add), except accepted ingest items, which
// are summed apart and added when scraped; gauges are read when scraped, so an idle node does no
// work for them.
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import { DurationHistogram } from './durations.ts';
import type { IngestSinkDepth } from '../ingest/sink.ts';

export type StoreName = 'analytics' | 'metadata';

/** Where the scraped gauges read from; attached once the node has composed them. */
export interface MetricSources {
  leadership(): { leader: boolean; epoch: number | null };
  /** The durable ingest buffer's depth, or null when the ingest path is not open. */
  ingestDepth(): Promise<IngestSinkDepth | null>;
  /** Webhook deliveries waiting, by status (pending, retrying, processing), or null when the stores are not open. */
  webhookQueue(): Promise<Record<string, number> | null>;
  /** Mail messages by status (pending, retrying, processing, failed), or null when the stores are not open. */
  mailQueue(): Promise<Record<string, number> | null>;
}

export interface NodeMetrics {
  readonly registry: Registry;
  /** One answered HTTP request: `route` is the route's pattern (`/api/sites/:id/stats`), never the raw URL. */
  httpRequest(method: string, route: string, status: number, seconds: number): void;
  /** Ingested items kept (accepted) or not (refused, with the reason: bot, forbidden, validation_failed, …). */
  ingest(outcome: 'accepted' | 'refused', reason: string, items?: number): void;
  /** A batch reached the analytics store: the writer is caught up to now if nothing else waits. */
  ingestStored(): void;
  /** One fsync of the single node's ingest journal, and how long it took. */
  journalSynced(seconds: number): void;
  /** Items this node accepted per second over the last minute. */
  recentIngestRate(): number;
  /** The journal's fsyncs of the last minute (at most the latest 4,096): median, 99th percentile and longest, in ms; null when none. */
  recentJournalFsyncs(): RecentFsyncs | null;
  storeQuery(store: StoreName, operation: string, seconds: number): void;
  /** One webhook delivery attempt and whether it failed (and why, a safe category). */
  webhookAttempt(ok: boolean, error: string | null): void;
  /** One attempt to hand a mail message to the SMTP server, and whether it failed. */
  mailAttempt(ok: boolean): void;
  attach(sources: MetricSources): void;
  /** The exposition text and its content type. */
  scrape(): Promise<{ contentType: string; body: string }>;
}

export interface RecentFsyncs {
  /** How many fsyncs the figures read. */
  fsyncs: number;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
}

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
// A local disk's fdatasync takes a few hundred microseconds; a stall of a second is what to see.
const FSYNC_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

const NO_LABELS: readonly string[] = [];

export function createNodeMetrics(): NodeMetrics {
  const registry = new Registry();
  // Event-loop delay (nodejs_eventloop_lag_*), heap (nodejs_heap_*), RSS (process_resident_memory_bytes), GC.
  collectDefaultMetrics({ register: registry });
  let sources: MetricSources | undefined;
  /** When the writer last stored a batch, or when the node started. */
  let lastStoredAt = Date.now();
  // Accepted items per second of the last minute: a ring of one-second slots, each stamped with its second.
  const RATE_WINDOW_S = 60;
  const acceptedPerSecond = new Float64Array(RATE_WINDOW_S);
  const slotSecond = new Float64Array(RATE_WINDOW_S).fill(-1);

  // The latest fsyncs of the journal, for the System page's recent figures: durations (ms) and when they ended.
  const RECENT_FSYNCS = 4096;
  const recentFsyncMs = new Float64Array(RECENT_FSYNCS);
  const recentFsyncAt = new Float64Array(RECENT_FSYNCS);
  let recentFsyncNext = 0;

  const requests = new DurationHistogram({
    name: 'plumb_http_request_duration_seconds',
    help: 'HTTP requests answered, by method, route pattern and status, with their duration',
    labelNames: ['method', 'route', 'status'],
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  // Every accepted hit would pay prom-client's hashing of its labels; a sum is enough until a scrape.
  let acceptedUncounted = 0;
  const ingested = new Counter({
    name: 'plumb_ingest_items_total',
    help: 'Ingest: pageviews, events, web vitals and AI fetches accepted (durable before the answer); items or whole requests refused, by reason',
    labelNames: ['outcome', 'reason'],
    registers: [registry],
    collect() {
      if (acceptedUncounted === 0) return;
      this.inc({ outcome: 'accepted', reason: '' }, acceptedUncounted);
      acceptedUncounted = 0;
    },
  });
  const storeQueries = new DurationHistogram({
    name: 'plumb_store_query_duration_seconds',
    help: 'Store calls by store (analytics, metadata) and operation (query, command, insert, transaction), with their duration',
    labelNames: ['store', 'operation'],
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const webhookAttempts = new Counter({
    name: 'plumb_webhook_attempts_total',
    help: 'Webhook delivery attempts made by this node (as leader), by result (ok, or the failure category)',
    labelNames: ['result'],
    registers: [registry],
  });

  // Every sync of the journal is an answer's wait (one per group commit by default, the round's
  // write with O_DSYNC): a slow disk shows here first.
  const journalSyncs = new DurationHistogram({
    name: 'plumb_ingest_journal_fsync_duration_seconds',
    help: "Single node: the ingest journal's syncs of its data to disk (one per group commit, its write with O_DSYNC; or an fsync at most once a second with -ingest-sync write), with their duration",
    labelNames: [],
    buckets: FSYNC_BUCKETS,
    registers: [registry],
  });

  new Gauge({
    name: 'plumb_ingest_journal_pending',
    help: 'Accepted ingest records (single node) or stream messages (cluster) not yet in the analytics store',
    registers: [registry],
    async collect() {
      const depth = await sources?.ingestDepth().catch(() => null);
      if (depth) this.set(depth.pending);
    },
  });
  new Gauge({
    name: 'plumb_ingest_journal_bytes',
    help: 'Bytes of the durable ingest buffer not yet in the analytics store',
    registers: [registry],
    async collect() {
      const depth = await sources?.ingestDepth().catch(() => null);
      if (depth) this.set(depth.bytes);
    },
  });
  new Gauge({
    name: 'plumb_ingest_writer_lag_seconds',
    help: 'While records wait in the journal: seconds since the writer last stored a batch; 0 when nothing waits',
    registers: [registry],
    async collect() {
      const depth = await sources?.ingestDepth().catch(() => null);
      this.set(depth && depth.pending > 0 ? (Date.now() - lastStoredAt) / 1000 : 0);
    },
  });
  new Gauge({
    name: 'plumb_webhook_deliveries',
    help: 'Webhook deliveries not finished, by status (pending, retrying, processing)',
    labelNames: ['status'],
    registers: [registry],
    async collect() {
      const queue = await sources?.webhookQueue().catch(() => null);
      if (!queue) return;
      for (const status of ['pending', 'retrying', 'processing']) this.set({ status }, queue[status] ?? 0);
    },
  });
  const mailAttempts = new Counter({
    name: 'plumb_mail_attempts_total',
    help: 'Attempts to hand a mail message to the SMTP server made by this node (as leader), by result (ok, failed)',
    labelNames: ['result'],
    registers: [registry],
  });
  new Gauge({
    name: 'plumb_mail_messages',
    help: 'Mail messages waiting (pending, retrying), being sent (processing), or given up on (failed, kept 30 days)',
    labelNames: ['status'],
    registers: [registry],
    async collect() {
      const queue = await sources?.mailQueue().catch(() => null);
      if (!queue) return;
      for (const status of ['pending', 'retrying', 'processing', 'failed']) this.set({ status }, queue[status] ?? 0);
    },
  });
  new Gauge({
    name: 'plumb_leader',
    help: '1 while this node is the cluster leader (runs the leader-only jobs), else 0',
    registers: [registry],
    collect() {
      if (sources) this.set(sources.leadership().leader ? 1 : 0);
    },
  });
  new Gauge({
    name: 'plumb_leader_epoch',
    help: 'Fencing epoch of the leadership this node holds; 0 while it follows',
    registers: [registry],
    collect() {
      const state = sources?.leadership();
      this.set(state?.leader && state.epoch !== null ? state.epoch : 0);
    },
  });

  return {
    registry,
    httpRequest(method, route, status, seconds) {
      requests.observe([method, route, String(status)], seconds);
    },
    ingest(outcome, reason, items = 1) {
      if (outcome === 'accepted' && reason === '') acceptedUncounted += items;
      else ingested.inc({ outcome, reason }, items);
      if (outcome !== 'accepted') return;
      const second = Math.floor(Date.now() / 1000);
      const slot = second % RATE_WINDOW_S;
      if (slotSecond[slot] !== second) {
        slotSecond[slot] = second;
        acceptedPerSecond[slot] = 0;
      }
      acceptedPerSecond[slot] += items;
    },
    recentIngestRate() {
      const now = Math.floor(Date.now() / 1000);
      let total = 0;
      for (let slot = 0; slot < RATE_WINDOW_S; slot++) if (now - slotSecond[slot] < RATE_WINDOW_S) total += acceptedPerSecond[slot];
      return Math.round((total / RATE_WINDOW_S) * 10) / 10;
    },
    ingestStored() {
      lastStoredAt = Date.now();
    },
    journalSynced(seconds) {
      journalSyncs.observe(NO_LABELS, seconds);
      const slot = recentFsyncNext++ % RECENT_FSYNCS;
      recentFsyncMs[slot] = seconds * 1000;
      recentFsyncAt[slot] = Date.now();
    },
    recentJournalFsyncs() {
      const since = Date.now() - RATE_WINDOW_S * 1000;
      const recent: number[] = [];
      for (let slot = 0; slot < Math.min(recentFsyncNext, RECENT_FSYNCS); slot++) if (recentFsyncAt[slot] >= since) recent.push(recentFsyncMs[slot]);
      if (recent.length === 0) return null;
      recent.sort((a, b) => a - b);
      // Nearest rank: the smallest duration at or above which the given share of fsyncs lie.
      const rank = (share: number) => recent[Math.max(0, Math.ceil(share * recent.length) - 1)];
      return { fsyncs: recent.length, p50_ms: rank(0.5), p99_ms: rank(0.99), max_ms: recent[recent.length - 1] };
    },
    storeQuery(store, operation, seconds) {
      storeQueries.observe([store, operation], seconds);
    },
    webhookAttempt(ok, error) {
      webhookAttempts.inc({ result: ok ? 'ok' : (error ?? 'failed') });
    },
    mailAttempt(ok) {
      mailAttempts.inc({ result: ok ? 'ok' : 'failed' });
    },
    attach(attached) {
      sources = attached;
    },
    async scrape() {
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
  };
}
