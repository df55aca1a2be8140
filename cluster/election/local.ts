// Leader election for a single node (no PLUMB_REDIS_URL): the only node leads from start to stop.
import { type Log, silentLog } from '../../lib/log.ts';
import { createLeadershipListeners, type LeaderElector, type LeadershipState } from './elector.ts';

export function createLocalElector(nodeId: string, log: Log = silentLog): LeaderElector {
  const listeners = createLeadershipListeners(log);
  let leader = false;
  // Each start is a new term, so a stop/start cycle still hands leader-only jobs a fresh epoch.
  let lastEpoch = 0;
  let epoch: number | null = null;

  const state = (): LeadershipState => ({
    leader,
    epoch,
    nodeId,
    leaderNodeId: leader ? nodeId : null,
    leaseExpiresAt: null,
  });

  return {
    kind: 'local',
    async start() {
      if (leader) return;
      leader = true;
      lastEpoch += 1;
      epoch = lastEpoch;
      log.info({ nodeId, epoch }, 'leading (single node)');
      listeners.emit(state());
    },
    async stop() {
      if (!leader) return;
      leader = false;
      epoch = null;
      log.info({ nodeId }, 'stepped down (single node stopping)');
      listeners.emit(state());
    },
    state,
    isLeader: () => leader,
    onChange: (listener) => listeners.add(listener),
  };
}
