// Runs leader-only work (schedulers, sweeps, syncs) on whichever node leads: each job starts with
// the fencing epoch when this node is elected and stops on step-down, never two instances at once.
import type { Log } from '../lib/log.ts';
import type { LeaderElector, LeadershipState } from './election/elector.ts';

export interface LeaderJob {
  /** Begins the work. `epoch` fences it: stamp writes with it so a deposed leader's are refused. */
  start(epoch: number): Promise<void> | void;
  /**
   * Ends the work. Also called right after a start that threw, to undo whatever that start had
   * begun (timers, subscriptions), so it must cope with a half-started job.
   */
  stop(): Promise<void> | void;
}

export interface LeaderJobs {
  /** Adds a job; it starts at once if this node already leads. Names are unique. */
  register(name: string, job: LeaderJob): void;
  /** Stops every running job and stops following the elector. Idempotent. */
  close(): Promise<void>;
}

interface Entry {
  name: string;
  job: LeaderJob;
  /** Epoch the job was started with, null while stopped. */
  runningEpoch: number | null;
  /** Epoch of the last start attempt: a start that threw is not retried until the next election. */
  attemptedEpoch: number | null;
  /** Every start/stop of this job runs on this chain, so two never overlap. */
  queue: Promise<void>;
}

const epochOf = (state: LeadershipState): number | null => (state.leader && state.epoch !== null ? state.epoch : null);

export function createLeaderJobs(elector: LeaderElector, log: Log): LeaderJobs {
  const entries = new Map<string, Entry>();
  let closed = false;
  /** The epoch jobs should run under now; null means they should all be stopped. */
  let wanted = epochOf(elector.state());

  const unsubscribe = elector.onChange((state) => {
    wanted = closed ? null : epochOf(state);
    for (const entry of entries.values()) enqueue(entry);
  });

  function enqueue(entry: Entry): Promise<void> {
    entry.queue = entry.queue.then(() => reconcile(entry));
    return entry.queue;
  }

  // Reads `wanted` when it runs, not when it was queued: a quick leader→follower→leader flip
  // becomes one stop and one start with the newest epoch, after the previous start has finished.
  async function reconcile(entry: Entry) {
    const target = wanted;
    if (entry.runningEpoch !== null && entry.runningEpoch !== target) await stopJob(entry);
    if (target !== null && entry.runningEpoch === null && entry.attemptedEpoch !== target) await startJob(entry, target);
  }

  async function startJob(entry: Entry, epoch: number) {
    entry.runningEpoch = epoch;
    entry.attemptedEpoch = epoch;
    try {
      await entry.job.start(epoch);
      log.debug({ job: entry.name, epoch }, 'leader job started');
    } catch (err) {
      // Only this job is affected: the others run on their own chains.
      log.error({ err, job: entry.name, epoch }, 'leader job failed to start');
      await stopJob(entry);
    }
  }

  async function stopJob(entry: Entry) {
    const epoch = entry.runningEpoch;
    entry.runningEpoch = null;
    try {
      await entry.job.stop();
      log.debug({ job: entry.name, epoch }, 'leader job stopped');
    } catch (err) {
      log.error({ err, job: entry.name, epoch }, 'leader job failed to stop cleanly');
    }
  }

  return {
    register(name, job) {
      if (closed) throw new Error(`Leader jobs are closed; cannot register "${name}"`);
      if (entries.has(name)) throw new Error(`Leader job "${name}" is already registered`);
      const entry: Entry = { name, job, runningEpoch: null, attemptedEpoch: null, queue: Promise.resolve() };
      entries.set(name, entry);
      void enqueue(entry);
    },

    async close() {
      if (!closed) {
        closed = true;
        unsubscribe();
        wanted = null;
      }
      await Promise.all([...entries.values()].map(enqueue));
    },
  };
}
