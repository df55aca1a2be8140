// Runs leader-only work (schedulers, sweeps, syncs) on whichever node leads: each job starts with
// the fencing epoch when this node is elected and stops on step-down, never two instances at once.
// Jobs are registered once, by the code that composes the node (lib/node.ts), never by a service
// as it starts: a service can be stopped and started again, a node's set of jobs cannot change
// under it. Work a service instance does as leader is plugged into a slot the node registered.
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

/** Removes a registered job, stopping it first if it runs; the name is free again afterwards. Idempotent. */
export type DisposeLeaderJob = () => Promise<void>;

export interface LeaderJobs {
  /** Adds a job; it starts at once if this node already leads. Names are unique among registered jobs. */
  register(name: string, job: LeaderJob): DisposeLeaderJob;
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
  /** Disposed: whatever the elector says, the job is stopped and stays stopped. */
  disposed: boolean;
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
    const target = entry.disposed ? null : wanted;
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
      const entry: Entry = { name, job, runningEpoch: null, attemptedEpoch: null, queue: Promise.resolve(), disposed: false };
      entries.set(name, entry);
      void enqueue(entry);
      return async () => {
        if (!entry.disposed) {
          entry.disposed = true;
          if (entries.get(name) === entry) entries.delete(name);
        }
        await enqueue(entry);
      };
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

export interface LeaderJobSlot {
  /** The job the node registers: it follows leadership and hands each start and stop to the worker plugged in. */
  readonly job: LeaderJob;
  /**
   * Plugs in the worker of the service instance that runs now; it starts at once with the current
   * epoch if the node leads. Returns the unplug (the instance is stopping), which stops it.
   */
  plug(worker: LeaderJob): () => Promise<void>;
}

/**
 * A leader job whose work is done by whichever instance of a service is current: the node
 * registers `slot.job` once; each instance plugs its worker in when it starts and unplugs it when
 * it stops, so a service stopped and started again runs its leader work once, with the right epoch.
 */
export function createLeaderJobSlot(log: Log): LeaderJobSlot {
  let epoch: number | null = null;
  let worker: LeaderJob | null = null;
  /** Starts and stops of the slot and its workers, one after another. */
  let queue: Promise<void> = Promise.resolve();
  /** Runs the step after the previous ones; its failure is the caller's to handle, the queue goes on. */
  const run = (step: () => Promise<void> | void): Promise<void> => {
    const done = queue.then(step);
    queue = done.catch(() => undefined);
    return done;
  };
  return {
    job: {
      start(current) {
        return run(async () => {
          epoch = current;
          await worker?.start(current);
        });
      },
      stop() {
        return run(async () => {
          epoch = null;
          await worker?.stop();
        });
      },
    },
    plug(plugged) {
      run(async () => {
        worker = plugged;
        if (epoch === null) return;
        try {
          await plugged.start(epoch);
        } catch (err) {
          log.error({ err, epoch }, 'leader job worker failed to start');
          await plugged.stop();
        }
      }).catch((err: unknown) => log.error({ err }, 'leader job worker failed to stop cleanly'));
      return () =>
        run(async () => {
          if (worker !== plugged) return;
          worker = null;
          if (epoch !== null) await plugged.stop();
        });
    },
  };
}
