// When the leader's imports runner looks for work: at once when it starts leading, at once when
// woken (a dry run or a run was asked for), again after a round that was woken while it ran, soon
// after a round that failed, and otherwise only at its occasional check, so an idle node leaves
// its metadata store alone. Driven on Jest's clock against a metadata store that holds no import;
// then the imports service's own runner, woken by the event a request broadcasts.
import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { ServiceBroker } from 'moleculer';
import type { LeaderJob } from '../../cluster/leader-jobs.ts';
import { importsRunnerJob } from '../../lib/imports/runner.ts';
import { silentLog } from '../../lib/log.ts';
import type { Runtime } from '../../lib/runtime.ts';
import type { MetadataQueryable } from '../../lib/stores/metadata/index.ts';
import createImportsService, { IMPORTS_QUEUED } from '../../services/imports.service.ts';
import { waitFor } from '../support/instance.ts';

/** A look for work: the read of whether an import waits (and its claim, were one to wait). */
const isLook = (sql: string) => sql.includes("WHERE state IN ('validating', 'running')");

/** A runtime whose metadata store holds no import; every statement is recorded, a claim may be held or fail. */
function emptyStore() {
  const statements: string[] = [];
  let heldClaim: Promise<void> | undefined;
  let failNextClaim = false;
  const tx: MetadataQueryable = {
    async query(sql: string) {
      statements.push(sql);
      if (isLook(sql)) {
        if (failNextClaim) {
          failNextClaim = false;
          throw new Error('the metadata store went away');
        }
        await heldClaim;
      }
      return { rows: [], rowCount: 0 };
    },
  } as MetadataQueryable;
  let transactions = 0;
  const fence = {
    run: (_epoch: number, work: (q: MetadataQueryable) => Promise<unknown>) => {
      transactions += 1;
      return work(tx);
    },
  };
  const runtime = { log: silentLog, metadata: () => tx, fence } as unknown as Runtime;
  return {
    runtime,
    claims: () => statements.filter(isLook).length,
    transactions: () => transactions,
    statements: () => statements.length,
    /** The next claims wait until the answer's release is called. */
    holdClaims() {
      let release!: () => void;
      heldClaim = new Promise((resolve) => (release = resolve));
      return () => {
        heldClaim = undefined;
        release();
      };
    },
    failNextClaim: () => (failNextClaim = true),
  };
}

describe('the imports runner', () => {
  beforeEach(() => {
    jest.useFakeTimers();
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  it('looks for work as soon as it starts leading, then leaves the store alone until its next check', async () => {
    const store = emptyStore();
    const runner = importsRunnerJob(store.runtime);
    await runner.start(1);
    await jest.advanceTimersByTimeAsync(0);
    expect(store.claims()).toBe(1);
    const afterFirstRound = store.statements();
    await jest.advanceTimersByTimeAsync(9_000);
    expect(store.statements()).toBe(afterFirstRound);
    await jest.advanceTimersByTimeAsync(1_000);
    expect(store.claims()).toBe(2);
    await runner.stop();
  });

  it('looks with one read and opens no transaction while no import waits', async () => {
    const store = emptyStore();
    const runner = importsRunnerJob(store.runtime);
    await runner.start(1);
    await jest.advanceTimersByTimeAsync(0);
    // A new leader's first round takes back earlier leaders' claims and sweeps stale uploads.
    const afterFirstRound = store.transactions();
    await jest.advanceTimersByTimeAsync(30_000);
    expect(store.claims()).toBe(4);
    expect(store.transactions()).toBe(afterFirstRound);
    await runner.stop();
  });

  it('looks at once when woken', async () => {
    const store = emptyStore();
    const runner = importsRunnerJob(store.runtime);
    await runner.start(1);
    await jest.advanceTimersByTimeAsync(2_000);
    expect(store.claims()).toBe(1);
    runner.wake();
    await jest.advanceTimersByTimeAsync(0);
    expect(store.claims()).toBe(2);
    await runner.stop();
  });

  it('looks again right after a round during which it was woken', async () => {
    const store = emptyStore();
    const runner = importsRunnerJob(store.runtime);
    const release = store.holdClaims();
    await runner.start(1);
    await jest.advanceTimersByTimeAsync(0);
    expect(store.claims()).toBe(1);
    // The request committed after this round's claim had read the table.
    runner.wake();
    release();
    await jest.advanceTimersByTimeAsync(0);
    expect(store.claims()).toBe(2);
    await runner.stop();
  });

  it('tries again a second after a round that failed, not at its next check', async () => {
    const store = emptyStore();
    const runner = importsRunnerJob(store.runtime);
    store.failNextClaim();
    await runner.start(1);
    await jest.advanceTimersByTimeAsync(0);
    expect(store.claims()).toBe(1);
    await jest.advanceTimersByTimeAsync(1_000);
    expect(store.claims()).toBe(2);
    await runner.stop();
  });

  it('does nothing when woken on a node that does not lead, or no longer does', async () => {
    const store = emptyStore();
    const runner = importsRunnerJob(store.runtime);
    runner.wake();
    await jest.advanceTimersByTimeAsync(20_000);
    expect(store.statements()).toBe(0);
    await runner.start(1);
    await jest.advanceTimersByTimeAsync(0);
    await runner.stop();
    const whileLeading = store.statements();
    runner.wake();
    await jest.advanceTimersByTimeAsync(20_000);
    expect(store.statements()).toBe(whileLeading);
  });
});

describe('the imports service', () => {
  it('wakes its runner, on a leading node, when it hears imports.queued', async () => {
    const store = emptyStore();
    // The node's slot, leading at epoch 1: the plugged runner starts at once.
    const importRunner = {
      plug(worker: LeaderJob) {
        void worker.start(1);
        return async () => worker.stop();
      },
    };
    const broker = new ServiceBroker({ logger: false });
    broker.createService(createImportsService({ ...store.runtime, importRunner } as unknown as Runtime));
    await broker.start();
    try {
      await waitFor(async () => store.claims() === 1, 5_000, () => 'the runner did not look when it started leading');
      // Its next check is ten seconds away: only the event can bring the next look this soon.
      await broker.broadcast(IMPORTS_QUEUED, {});
      await waitFor(async () => store.claims() === 2, 5_000, () => 'the runner did not look when woken');
    } finally {
      await broker.stop();
    }
  });
});
