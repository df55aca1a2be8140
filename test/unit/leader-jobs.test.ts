// Leader-only jobs follow the elector: start with the epoch on election, stop on step-down and on
// close, and never run two instances of one job, driven here by a hand-cranked fake elector.
import { describe, expect, it } from '@jest/globals';
import type { LeaderElector, LeadershipState } from '../../cluster/election/elector.ts';
import { createLeaderJobSlot, createLeaderJobs, type LeaderJob } from '../../cluster/leader-jobs.ts';
import { silentLog } from '../../lib/log.ts';

function fakeElector(nodeId = 'node-a') {
  let current: LeadershipState = { leader: false, epoch: null, nodeId, leaderNodeId: null, leaseExpiresAt: null };
  const listeners = new Set<(state: LeadershipState) => void>();
  const elector: LeaderElector & { set(leader: boolean, epoch?: number): void; listenerCount(): number } = {
    kind: 'local',
    start: async () => {},
    stop: async () => {},
    state: () => ({ ...current }),
    isLeader: () => current.leader,
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    set(leader, epoch) {
      current = { leader, epoch: leader ? (epoch ?? 1) : null, nodeId, leaderNodeId: leader ? nodeId : null, leaseExpiresAt: null };
      for (const listener of listeners) listener({ ...current });
    },
    listenerCount: () => listeners.size,
  };
  return elector;
}

/** A job that writes what happens to it into a shared journal. */
function recordingJob(name: string, journal: string[], hooks: { start?: (epoch: number) => Promise<void> | void } = {}): LeaderJob {
  return {
    async start(epoch) {
      journal.push(`${name} start ${epoch}`);
      await hooks.start?.(epoch);
    },
    stop() {
      journal.push(`${name} stop`);
    },
  };
}

/** Lets queued job starts and stops (promise chains) run to completion. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 10));

function capturingLog() {
  const errors: { obj: unknown; msg?: string }[] = [];
  const log = { ...silentLog, trace() {}, debug() {}, info() {}, warn() {}, error: (obj: unknown, msg?: string) => void errors.push({ obj, msg }) };
  return { log, errors };
}

describe('createLeaderJobs', () => {
  it('starts every registered job with the epoch when the node is elected', async () => {
    const elector = fakeElector();
    const journal: string[] = [];
    const jobs = createLeaderJobs(elector, silentLog);
    jobs.register('rollups', recordingJob('rollups', journal));
    jobs.register('salts', recordingJob('salts', journal));
    await settle();
    expect(journal).toEqual([]);

    elector.set(true, 7);
    await settle();
    expect(journal).toEqual(['rollups start 7', 'salts start 7']);
    await jobs.close();
  });

  it('stops the jobs on step-down and starts them again with the new epoch on re-election', async () => {
    const elector = fakeElector();
    const journal: string[] = [];
    const jobs = createLeaderJobs(elector, silentLog);
    jobs.register('rollups', recordingJob('rollups', journal));
    elector.set(true, 3);
    await settle();
    elector.set(false);
    await settle();
    expect(journal).toEqual(['rollups start 3', 'rollups stop']);

    elector.set(true, 4);
    await settle();
    expect(journal).toEqual(['rollups start 3', 'rollups stop', 'rollups start 4']);
    await jobs.close();
  });

  it('restarts a job when the epoch changes without a follower state in between', async () => {
    const elector = fakeElector();
    const journal: string[] = [];
    const jobs = createLeaderJobs(elector, silentLog);
    jobs.register('rollups', recordingJob('rollups', journal));
    elector.set(true, 5);
    await settle();
    elector.set(true, 6);
    await settle();
    expect(journal).toEqual(['rollups start 5', 'rollups stop', 'rollups start 6']);
    await jobs.close();
  });

  it('starts a job registered while already leader at once, with the current epoch', async () => {
    const elector = fakeElector();
    elector.set(true, 12);
    const journal: string[] = [];
    const jobs = createLeaderJobs(elector, silentLog);
    jobs.register('late', recordingJob('late', journal));
    await settle();
    expect(journal).toEqual(['late start 12']);
    await jobs.close();
  });

  it('logs a job whose start throws, undoes it with stop, and still starts the others', async () => {
    const elector = fakeElector();
    const journal: string[] = [];
    const { log, errors } = capturingLog();
    const jobs = createLeaderJobs(elector, log);
    jobs.register('broken', recordingJob('broken', journal, { start: () => Promise.reject(new Error('no database')) }));
    jobs.register('healthy', recordingJob('healthy', journal));
    elector.set(true, 2);
    await settle();

    expect(journal).toEqual(['broken start 2', 'healthy start 2', 'broken stop']);
    expect(errors).toHaveLength(1);
    expect(errors[0].msg).toBe('leader job failed to start');
    expect(errors[0].obj).toMatchObject({ job: 'broken', epoch: 2 });

    // The broken job counts as stopped: step-down stops only the healthy one.
    elector.set(false);
    await settle();
    expect(journal).toEqual(['broken start 2', 'healthy start 2', 'broken stop', 'healthy stop']);
    await jobs.close();
  });

  it('never overlaps two instances of a job on a quick leader → follower → leader flip', async () => {
    const elector = fakeElector();
    const journal: string[] = [];
    let running = 0;
    let maxRunning = 0;
    const pendingStarts: (() => void)[] = [];
    const jobs = createLeaderJobs(elector, silentLog);
    jobs.register('slow', {
      async start(epoch) {
        running += 1;
        maxRunning = Math.max(maxRunning, running);
        journal.push(`start ${epoch} begins`);
        await new Promise<void>((resolve) => pendingStarts.push(resolve));
        journal.push(`start ${epoch} done`);
      },
      async stop() {
        journal.push('stop begins');
        await new Promise((resolve) => setTimeout(resolve, 5));
        running -= 1;
        journal.push('stop done');
      },
    });

    elector.set(true, 1);
    await settle();
    elector.set(false);
    elector.set(true, 2);
    await settle();
    // The first start is still in progress: nothing else may have begun.
    expect(journal).toEqual(['start 1 begins']);

    pendingStarts.shift()!();
    await settle();
    expect(journal).toEqual(['start 1 begins', 'start 1 done', 'stop begins', 'stop done', 'start 2 begins']);
    pendingStarts.shift()!();
    await settle();
    expect(journal.at(-1)).toBe('start 2 done');
    expect(maxRunning).toBe(1);
    await jobs.close();
    expect(running).toBe(0);
  });

  it('collapses flips that happen before anything ran into one start with the newest epoch', async () => {
    const elector = fakeElector();
    const journal: string[] = [];
    const jobs = createLeaderJobs(elector, silentLog);
    jobs.register('rollups', recordingJob('rollups', journal));
    elector.set(true, 1);
    elector.set(false);
    elector.set(true, 2);
    await settle();
    expect(journal).toEqual(['rollups start 2']);
    await jobs.close();
  });

  it('stops running jobs on close and stops following the elector', async () => {
    const elector = fakeElector();
    const journal: string[] = [];
    const jobs = createLeaderJobs(elector, silentLog);
    jobs.register('rollups', recordingJob('rollups', journal));
    elector.set(true, 9);
    await settle();

    await jobs.close();
    expect(journal).toEqual(['rollups start 9', 'rollups stop']);
    expect(elector.listenerCount()).toBe(0);

    elector.set(true, 10);
    await settle();
    expect(journal).toEqual(['rollups start 9', 'rollups stop']);
    await jobs.close();
    expect(() => jobs.register('more', recordingJob('more', journal))).toThrow('Leader jobs are closed; cannot register "more"');
  });

  it('refuses a second job under the same name', () => {
    const jobs = createLeaderJobs(fakeElector(), silentLog);
    jobs.register('rollups', recordingJob('rollups', []));
    expect(() => jobs.register('rollups', recordingJob('rollups', []))).toThrow('Leader job "rollups" is already registered');
  });

  it('stops a disposed job, keeps it stopped through later elections, and lets its name be registered again', async () => {
    const elector = fakeElector();
    const journal: string[] = [];
    const jobs = createLeaderJobs(elector, silentLog);
    const dispose = jobs.register('rollups', recordingJob('rollups', journal));
    elector.set(true, 1);
    await settle();

    await dispose();
    expect(journal).toEqual(['rollups start 1', 'rollups stop']);
    elector.set(true, 2);
    await settle();
    expect(journal).toEqual(['rollups start 1', 'rollups stop']);
    await dispose(); // idempotent
    expect(journal).toEqual(['rollups start 1', 'rollups stop']);

    jobs.register('rollups', recordingJob('rollups again', journal));
    await settle();
    expect(journal).toEqual(['rollups start 1', 'rollups stop', 'rollups again start 2']);
    await jobs.close();
  });
});

describe('createLeaderJobSlot', () => {
  it('runs the work of whichever worker is plugged in, once, with the current epoch', async () => {
    const elector = fakeElector();
    const journal: string[] = [];
    const jobs = createLeaderJobs(elector, silentLog);
    const slot = createLeaderJobSlot(silentLog);
    jobs.register('dispatch', slot.job);
    const unplugFirst = slot.plug(recordingJob('first', journal));
    elector.set(true, 3);
    await settle();
    expect(journal).toEqual(['first start 3']);

    // The service stops and starts again: the old worker stops, the new one takes over the epoch.
    await unplugFirst();
    const unplugSecond = slot.plug(recordingJob('second', journal));
    await settle();
    expect(journal).toEqual(['first start 3', 'first stop', 'second start 3']);

    elector.set(false);
    await settle();
    await unplugFirst(); // a stale unplug leaves the current worker alone
    expect(journal).toEqual(['first start 3', 'first stop', 'second start 3', 'second stop']);
    await unplugSecond();
    expect(journal).toEqual(['first start 3', 'first stop', 'second start 3', 'second stop']);
    await jobs.close();
  });

  it('starts nothing while no worker is plugged in, and a worker plugged in while following waits for election', async () => {
    const elector = fakeElector();
    const journal: string[] = [];
    const jobs = createLeaderJobs(elector, silentLog);
    const slot = createLeaderJobSlot(silentLog);
    jobs.register('dispatch', slot.job);
    elector.set(true, 1);
    await settle();
    elector.set(false);
    await settle();
    slot.plug(recordingJob('worker', journal));
    await settle();
    expect(journal).toEqual([]);
    elector.set(true, 2);
    await settle();
    expect(journal).toEqual(['worker start 2']);
    await jobs.close();
    expect(journal).toEqual(['worker start 2', 'worker stop']);
  });
});
