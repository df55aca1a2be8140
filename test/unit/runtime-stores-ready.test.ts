// The "stores ready" phase of a node's start-up: hooks run once both stores are open, in the order
// they were registered, before the node reports ready; a hook registered later runs at once.
import { describe, expect, it } from '@jest/globals';
import { loadConfig } from '../../lib/config.ts';
import { silentLog } from '../../lib/log.ts';
import { createRuntime, type MutableRuntime } from '../../lib/runtime.ts';
import type { AnalyticsStore } from '../../lib/stores/analytics/index.ts';
import type { MetadataStore } from '../../lib/stores/metadata/index.ts';

const stores = { metadata: { kind: 'metadata' } as unknown as MetadataStore, analytics: { kind: 'analytics' } as unknown as AnalyticsStore };

function runtime(): MutableRuntime {
  const config = loadConfig({ env: { PLUMB_DATA_DIR: '/nonexistent', PLUMB_LOG_LEVEL: 'silent' } });
  const parts = { config, log: silentLog, jwtSecret: new Uint8Array(32) };
  return createRuntime(parts as unknown as Parameters<typeof createRuntime>[0]);
}

describe('Runtime.whenStoresReady', () => {
  it('runs the hooks after the stores are open, in order, each finished before the next', async () => {
    const node = runtime();
    const journal: string[] = [];
    void node.whenStoresReady(async () => {
      journal.push(`first sees ${(node.metadata() as unknown as { kind: string }).kind} and ${(node.analytics() as unknown as { kind: string }).kind}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
      journal.push('first done');
    });
    void node.whenStoresReady(() => {
      journal.push('second');
    });
    expect(() => node.metadata()).toThrow('the stores are not ready');
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(journal).toEqual([]);

    await node.storesOpened(stores);
    expect(journal).toEqual(['first sees metadata and analytics', 'first done', 'second']);
    expect(node.isReady()).toBe(false);
    node.setReady(true);
    expect(node.isReady()).toBe(true);
  });

  it('runs a hook registered after the phase at once', async () => {
    const node = runtime();
    await node.storesOpened(stores);
    const journal: string[] = [];
    await node.whenStoresReady(() => {
      journal.push('late');
    });
    expect(journal).toEqual(['late']);
  });

  it('fails the phase when a hook throws, and settles that hook’s promise with the failure', async () => {
    const node = runtime();
    const failing = node.whenStoresReady(() => {
      throw new Error('replay failed');
    });
    const after: string[] = [];
    void node.whenStoresReady(() => {
      after.push('ran');
    });
    await expect(node.storesOpened(stores)).rejects.toThrow('replay failed');
    await expect(failing).rejects.toThrow('replay failed');
    expect(after).toEqual([]);
  });
});
