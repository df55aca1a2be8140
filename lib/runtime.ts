// What a running Plumb node holds: config, stores, leadership. Services receive it from their
// factory; a store asked for before start-up opened it answers 503, so /readyz and the API agree.
import type { LeaderElector } from '../cluster/election/elector.ts';
import type { LeaderFence } from '../cluster/fencing.ts';
import type { LeaderJobs } from '../cluster/leader-jobs.ts';
import type { ClusterStatus } from '../cluster/status.ts';
import type { ApiClientVerifier } from './auth/api-clients.ts';
import type { Config } from './config.ts';
import type { RateLimits } from './http/rate-limit.ts';
import type { OpenIngestSink } from './ingest/sink.ts';
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
  /** HMAC key for session tokens (configured or generated into the data dir). */
  readonly jwtSecret: Uint8Array;
  readonly elector: LeaderElector;
  readonly leaderJobs: LeaderJobs;
  /** Checks a leader's epoch at the metadata database around leader-only side effects (cluster/fencing.ts). */
  readonly fence: LeaderFence;
  /** Nodes, leader, buffer depth, forwarding (GET /api/admin/cluster). */
  readonly cluster: ClusterStatus;
  /** Opens the durable path accepted events take: disk journal (single node) or JetStream (cluster). */
  readonly openIngestSink: OpenIngestSink;
  readonly rateLimits: RateLimits;
  readonly sites: SiteDirectory;
  readonly apiClients: ApiClientVerifier;
  readonly sessions: SessionService;
  metadata(): MetadataStore;
  analytics(): AnalyticsStore;
  /** True once both stores are open and migrated; false again as soon as shutdown begins. */
  isReady(): boolean;
}

export interface MutableRuntime extends Runtime {
  attachStores(stores: { metadata: MetadataStore; analytics: AnalyticsStore }): void;
  setReady(ready: boolean): void;
  /** Shutdown began: /readyz turns 503 so balancers drain us, while in-flight work keeps its stores. */
  setStopping(): void;
  detachStores(): void;
}

export function createRuntime(
  parts: Pick<Runtime, 'config' | 'log' | 'jwtSecret' | 'elector' | 'leaderJobs' | 'fence' | 'cluster' | 'openIngestSink' | 'rateLimits'>,
): MutableRuntime {
  let metadata: MetadataStore | undefined;
  let analytics: AnalyticsStore | undefined;
  let ready = false;
  let stopping = false;
  const notReady = () => unavailable('Plumb is starting or stopping; the stores are not ready', 1);
  const metadataStore = () => {
    if (!metadata || !ready) throw notReady();
    return metadata;
  };
  return {
    ...parts,
    sites: createSiteDirectory(metadataStore),
    apiClients: createApiClientVerifier(metadataStore),
    sessions: createSessionService(parts.config, parts.jwtSecret, metadataStore),
    metadata: metadataStore,
    analytics() {
      if (!analytics || !ready) throw notReady();
      return analytics;
    },
    isReady: () => ready && !stopping,
    attachStores(stores) {
      metadata = stores.metadata;
      analytics = stores.analytics;
    },
    setReady(value) {
      ready = value;
    },
    setStopping() {
      stopping = true;
    },
    detachStores() {
      ready = false;
      metadata = undefined;
      analytics = undefined;
    },
  };
}
