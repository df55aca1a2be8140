// What GET /api/admin/cluster shows, gathered on the node that answers: the nodes its broker
// knows, the leader and its lease as this node last read them, the epoch the metadata database
// was last claimed by (the one fencing checks against), this node's own terms as leader, how much
// accepted ingest still waits for the analytics store, and the forwarding counters.
import type { ServiceBroker } from 'moleculer';
import type { Config } from '../lib/config.ts';
import { unavailable } from '../lib/errors.ts';
import type { IngestSink, IngestSinkDepth } from '../lib/ingest/sink.ts';
import type { MetadataQueryable } from '../lib/stores/metadata/index.ts';
import type { LeaderElector } from './election/elector.ts';
import { currentLeaderEpoch } from './fencing.ts';
import type { ForwardedBatch, Forwarder, ForwardingStats } from './forwarding.ts';

export interface LeaderTerm {
  epoch: number;
  started_at: string;
  /** Null while the term lasts. */
  ended_at: string | null;
}

export interface ClusterView {
  mode: 'cluster' | 'single';
  namespace: string;
  node_id: string;
  leader: { node_id: string | null; epoch: number | null; lease_expires_at: string | null };
  this_node: { node_id: string; leader: boolean; epoch: number | null; terms: LeaderTerm[] };
  nodes: { node_id: string; available: boolean; local: boolean; leader: boolean; hostname: string | null }[];
  buffer: IngestSinkDepth | null;
  forwarding: ForwardingStats | null;
}

export interface ClusterStatus {
  attachSink(sink: IngestSink): void;
  attachForwarder(forwarder: Forwarder): void;
  detach(): void;
  /** The leader's side of a forwarded batch (action cluster.receive). */
  receive(batch: ForwardedBatch): Promise<void>;
  view(broker: ServiceBroker, db: MetadataQueryable): Promise<ClusterView>;
}

/** Terms kept for the admin view: enough to see the recent changes, bounded for a flapping node. */
const MAX_TERMS = 20;

export function createClusterStatus(config: Config, elector: LeaderElector): ClusterStatus {
  let sink: IngestSink | undefined;
  let forwarder: Forwarder | undefined;
  const terms: LeaderTerm[] = [];
  elector.onChange((state) => {
    const now = new Date().toISOString();
    const open = terms.at(-1);
    if (open && open.ended_at === null && open.epoch !== state.epoch) open.ended_at = now;
    if (state.leader && state.epoch !== null && open?.epoch !== state.epoch) {
      terms.push({ epoch: state.epoch, started_at: now, ended_at: null });
      if (terms.length > MAX_TERMS) terms.shift();
    }
  });

  return {
    attachSink(attached) {
      sink = attached;
    },
    attachForwarder(attached) {
      forwarder = attached;
    },
    detach() {
      sink = undefined;
      forwarder = undefined;
    },
    async receive(batch) {
      if (!forwarder) throw unavailable('This node is not ready to take forwarded ingest', 1);
      await forwarder.receive(batch);
    },
    async view(broker, db) {
      const state = elector.state();
      const nodes = (broker.registry.getNodeList({ onlyAvailable: false, withServices: false }) as { id: string; available: boolean; local: boolean; hostname?: string }[])
        .map((node) => ({ node_id: node.id, available: node.available, local: node.local, leader: node.id === state.leaderNodeId, hostname: node.hostname ?? null }))
        .sort((a, b) => a.node_id.localeCompare(b.node_id));
      return {
        mode: config.clusterMode ? 'cluster' : 'single',
        namespace: config.namespace,
        node_id: config.nodeId,
        leader: {
          node_id: state.leaderNodeId,
          epoch: elector.kind === 'redis' ? await currentLeaderEpoch(db) : state.epoch,
          lease_expires_at: state.leaseExpiresAt === null ? null : new Date(state.leaseExpiresAt).toISOString(),
        },
        this_node: { node_id: config.nodeId, leader: state.leader, epoch: state.epoch, terms: terms.map((t) => ({ ...t })) },
        nodes,
        buffer: sink ? await sink.depth().catch(() => null) : null,
        forwarding: forwarder?.stats() ?? null,
      };
    },
  };
}
