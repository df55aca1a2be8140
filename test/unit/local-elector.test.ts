// The single-node elector: the only node leads (epoch 1) from start until stop.
import { describe, expect, it } from '@jest/globals';
import type { LeadershipState } from '../../cluster/election/elector.ts';
import { createLocalElector } from '../../cluster/election/local.ts';

describe('createLocalElector', () => {
  it('follows before start and leads with epoch 1 after it', async () => {
    const elector = createLocalElector('node-a');
    expect(elector.kind).toBe('local');
    expect(elector.isLeader()).toBe(false);
    expect(elector.state()).toEqual({ leader: false, epoch: null, nodeId: 'node-a', leaderNodeId: null, leaseExpiresAt: null });

    await elector.start();
    expect(elector.isLeader()).toBe(true);
    expect(elector.state()).toEqual({ leader: true, epoch: 1, nodeId: 'node-a', leaderNodeId: 'node-a', leaseExpiresAt: null });
  });

  it('announces election and step-down once each, even when start and stop repeat', async () => {
    const elector = createLocalElector('node-a');
    const seen: LeadershipState[] = [];
    elector.onChange((state) => seen.push(state));
    await elector.start();
    await elector.start();
    await elector.stop();
    await elector.stop();
    expect(seen).toEqual([
      { leader: true, epoch: 1, nodeId: 'node-a', leaderNodeId: 'node-a', leaseExpiresAt: null },
      { leader: false, epoch: null, nodeId: 'node-a', leaderNodeId: null, leaseExpiresAt: null },
    ]);
    expect(elector.isLeader()).toBe(false);
  });

  it('starts a new term with a higher epoch after a stop', async () => {
    const elector = createLocalElector('node-a');
    await elector.start();
    await elector.stop();
    await elector.start();
    expect(elector.state().epoch).toBe(2);
  });

  it('stops calling a listener once unsubscribed, and survives a throwing listener', async () => {
    const elector = createLocalElector('node-a');
    const calls: string[] = [];
    elector.onChange(() => {
      throw new Error('listener bug');
    });
    const unsubscribe = elector.onChange((state) => calls.push(state.leader ? 'leader' : 'follower'));
    await elector.start();
    unsubscribe();
    await elector.stop();
    expect(calls).toEqual(['leader']);
  });
});
