// The contract every leader elector fulfils (local: the only node; redis: a lease shared by a
// cluster), and the listener list both use to announce transitions.
import type { Log } from '../../lib/log.ts';

export interface LeadershipState {
  leader: boolean;
  /** This node's fencing epoch while it leads; null while it follows. Strictly increases across holders. */
  epoch: number | null;
  nodeId: string;
  /** The node holding the lease as last seen (this node while it leads); null when none or unknown. */
  leaderNodeId: string | null;
  /** When the current lease lapses unless renewed, in ms since the Unix epoch; for the admin view only. */
  leaseExpiresAt: number | null;
}

export interface LeaderElector {
  readonly kind: 'local' | 'redis';
  /** Begins campaigning; resolves after the first attempt (leader or not). */
  start(): Promise<void>;
  /** Stops renewing; if leader, releases the lease (compare-and-delete) and emits a step-down. Idempotent. */
  stop(): Promise<void>;
  state(): LeadershipState;
  isLeader(): boolean;
  /** Called on transitions only (leader ↔ follower, or a new epoch). Returns the unsubscribe. */
  onChange(listener: (state: LeadershipState) => void): () => void;
}

export type LeadershipListener = (state: LeadershipState) => void;

export interface LeadershipListeners {
  add(listener: LeadershipListener): () => void;
  emit(state: LeadershipState): void;
}

/**
 * Listener registry shared by the electors. A throwing listener is logged and skipped: one bad
 * subscriber must never stop the others from hearing about a step-down, nor break the elector.
 */
export function createLeadershipListeners(log: Log): LeadershipListeners {
  // Entries are wrapper objects so the same function subscribed twice unsubscribes independently.
  const entries = new Set<{ listener: LeadershipListener }>();
  return {
    add(listener) {
      const entry = { listener };
      entries.add(entry);
      return () => {
        entries.delete(entry);
      };
    },
    emit(state) {
      for (const entry of [...entries]) {
        try {
          entry.listener({ ...state });
        } catch (err) {
          log.error({ err }, 'leadership listener threw');
        }
      }
    },
  };
}
