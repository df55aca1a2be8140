// What a running Plumb node holds: config, stores, leadership, and the "stores ready" phase of its
// start-up. Services receive it from their factory; a store asked for before start-up opened it
// answers 503. The order of a node's life is in docs/architecture.md (Lifecycle).
import { CORE_SCOPES, type ScopeInfo } from './auth/roles.ts';
import type { CatalogEntry } from './webhooks/catalog.ts';
import type { LeaderElector } from '../cluster/election/elector.ts';
import type { LeaderFence } from '../cluster/fencing.ts';
import type { LeaderJobSlot, LeaderJobs } from '../cluster/leader-jobs.ts';
import type { ClusterStatus } from '../cluster/status.ts';
import type { ApiClientVerifier } from './auth/api-clients.ts';
import type { Config } from './config.ts';
import type { RateLimits } from './http/rate-limit.ts';
import type { OpenIngestSink } from './ingest/sink.ts';
import { createNodeMetrics, type NodeMetrics } from './metrics/metrics.ts';
import { createApiClientVerifier } from './auth/api-clients.ts';
import { createSessionService, type SessionService } from './auth/sessions.ts';
import { unavailable } from './errors.ts';
import { createSiteDirectory } from './sites/sites.ts';
import type { Log } from './log.ts';
import type { AnalyticsStore } from './stores/analytics/index.ts';
import type { SiteDirectory } from './sites/sites.ts';
import type { MetadataStore } from './stores/metadata/index.ts';

export interface Runtime {
  readonly config: Config;
  readonly log: Log;
  /** The scopes an API client may hold on this node: Plumb's own, then those of its plugins. */
  readonly apiScopes: readonly ScopeInfo[];
  /** Webhook event types the node's plugins add to the catalog. */
  readonly addedWebhookEvents: readonly CatalogEntry[];
  /** HMAC key for session tokens (configured or generated into the data dir). */
  readonly jwtSecret: Uint8Array;
  readonly elector: LeaderElector;
  readonly leaderJobs: LeaderJobs;
  /** The leader job delivering webhooks; the webhooks service instance that runs plugs its dispatcher in. */
  readonly webhookDispatch: LeaderJobSlot;
  /** The leader job sending mail; the mail service instance that runs plugs its dispatcher in. */
  readonly mailDispatch: LeaderJobSlot;
  /** The leader job running imports; the imports service instance that runs plugs its runner in. */
  readonly importRunner: LeaderJobSlot;
  /** Checks a leader's epoch at the metadata database around leader-only side effects (cluster/fencing.ts). */
  readonly fence: LeaderFence;
  /** Nodes, leader, buffer depth, forwarding (GET /api/admin/cluster). */
  readonly cluster: ClusterStatus;
  /** Opens the durable path accepted events take: disk journal (single node) or JetStream (cluster). */
  readonly openIngestSink: OpenIngestSink;
  readonly rateLimits: RateLimits;
  /** What GET /metrics reports (lib/metrics). */
  readonly metrics: NodeMetrics;
  readonly sites: SiteDirectory;
  readonly apiClients: ApiClientVerifier;
  readonly sessions: SessionService;
  metadata(): MetadataStore;
  analytics(): AnalyticsStore;
  /**
   * The "stores ready" phase: runs the hook once both stores are open and migrated, before the
   * node reports ready and before it campaigns for leadership; at once when that has happened.
   * Start-up waits for the hooks in the order they were registered, and fails if one throws.
   * The promise settles with the hook (a caller may ignore it: start-up reports the failure).
   */
  whenStoresReady(hook: () => Promise<void> | void): Promise<void>;
  /** True once the stores are ready and the node has started; false again as soon as shutdown begins. */
  isReady(): boolean;
}

export interface MutableRuntime extends Runtime {
  /** Makes the open, migrated stores available and runs the "stores ready" hooks, in order. */
  storesOpened(stores: { metadata: MetadataStore; analytics: AnalyticsStore }): Promise<void>;
  setReady(ready: boolean): void;
  /** Shutdown began: /readyz turns 503 so balancers drain us, while in-flight work keeps its stores. */
  setStopping(): void;
  detachStores(): void;
}

export function createRuntime(
  parts: Pick<Runtime, 'config' | 'log' | 'jwtSecret' | 'elector' | 'leaderJobs' | 'webhookDispatch' | 'mailDispatch' | 'importRunner' | 'fence' | 'cluster' | 'openIngestSink' | 'rateLimits'> &
    Partial<Pick<Runtime, 'apiScopes' | 'addedWebhookEvents' | 'metrics'>>,
): MutableRuntime {
  let metadata: MetadataStore | undefined;
  let analytics: AnalyticsStore | undefined;
  let ready = false;
  let stopping = false;
  /** Hooks waiting for the stores; null once the phase has passed (later hooks run at once). */
  let waiting: (() => Promise<void>)[] | null = [];
  const notReady = () => unavailable('Plumb is starting or stopping; the stores are not ready', 1);
  const metadataStore = () => {
    if (!metadata) throw notReady();
    return metadata;
  };
  return {
    ...parts,
    apiScopes: parts.apiScopes ?? CORE_SCOPES,
    addedWebhookEvents: parts.addedWebhookEvents ?? [],
    metrics: parts.metrics ?? createNodeMetrics(),
    sites: createSiteDirectory(metadataStore),
    apiClients: createApiClientVerifier(metadataStore),
    sessions: createSessionService(parts.config, parts.jwtSecret, metadataStore),
    metadata: metadataStore,
    analytics() {
      if (!analytics) throw notReady();
      return analytics;
    },
    whenStoresReady(hook) {
      let settled: Promise<void>;
      if (waiting === null) settled = Promise.resolve().then(hook);
      else {
        const queue = waiting;
        settled = new Promise<void>((resolve, reject) => {
          queue.push(() => Promise.resolve().then(hook).then(resolve, (err: unknown) => {
            reject(err);
            throw err;
          }));
        });
      }
      // Marked handled: a caller that ignores the promise must not turn a failure into an
      // unhandled rejection (start-up reports it).
      settled.catch(() => undefined);
      return settled;
    },
    isReady: () => ready && !stopping,
    async storesOpened(stores) {
      metadata = stores.metadata;
      analytics = stores.analytics;
      const hooks = waiting ?? [];
      waiting = null;
      for (const hook of hooks) await hook();
    },
    setReady(value) {
      ready = value;
    },
    setStopping() {
      stopping = true;
    },
    detachStores() {
      ready = false;
      waiting = null;
      metadata = undefined;
      analytics = undefined;
    },
  };
}
