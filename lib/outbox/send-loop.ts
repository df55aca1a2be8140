// The leader's send loop for an outbox (webhook deliveries, mail): claims due items up to a
// concurrency limit, sends each, records the outcome (done, retried later with exponential
// backoff, or failed after the last attempt) and sleeps until the next item is due or something
// is queued. A periodic sweep looks at the queue with one read, re-queues claims whose node died
// mid-attempt when it finds any, wakes the loop for what is due, and purges old history; an empty
// queue costs that one read every sweep and no transaction (on a single node the metadata store
// runs on the main thread, where every statement delays the requests waiting behind it).
// Every write goes through the queue the loop gets for its leadership epoch, so a deposed leader
// changes nothing. Nothing is held only in memory: a crash loses at most the knowledge that an
// attempt was in flight, and the sweep sends it again. What an item is, how it is sent and which
// SQL claims it is the kind's (lib/webhooks/dispatcher.ts, lib/mail/dispatcher.ts).
import type { Log } from '../log.ts';
import type { MetadataQueryable } from '../stores/metadata/index.ts';

/** Runs fn in one metadata transaction (fenced by the leader's epoch on a leader). */
export type TransactionRunner = <T>(fn: (tx: MetadataQueryable) => Promise<T>) => Promise<T>;

/** What one attempt came to, as the queue records it. */
export interface SendOutcome {
  ok: boolean;
  /** A safe category or the receiver's answer; null on success. */
  error: string | null;
  /** Seconds until the next attempt, when this one failed and attempts remain. */
  retryInSeconds: number;
  maxAttempts: number;
}

/** An attempt's own findings; the loop adds whether it succeeded and when to retry. */
export type SendResult<Outcome extends SendOutcome> = Omit<Outcome, 'ok' | 'retryInSeconds' | 'maxAttempts'>;

/** The writes the loop makes, every one fenced by the epoch the queue was made for. */
export interface OutboxQueue<Item, Outcome extends SendOutcome> {
  /** Marks up to `limit` due items as processing and returns them; a claim expires after `leaseSeconds`. */
  claim(limit: number, leaseSeconds: number): Promise<Item[]>;
  /** Records the attempt; only this claim's row changes, so a swept claim's late outcome is ignored. */
  complete(item: Item, outcome: Outcome): Promise<void>;
  /** Puts expired claims (their node died mid-attempt) back in the queue, due now. Returns how many. */
  requeueStalled(): Promise<number>;
  /** Deletes finished history older than the retention. */
  purge(retentionDays: number): Promise<void>;
  /** What waits, in one read: nothing is written. */
  outlook(): Promise<QueueOutlook>;
}

export interface QueueOutlook {
  /** Seconds until the next item is due (0 when one is due now), or null when none waits. */
  secondsUntilNextDue: number | null;
  /** Whether some claim's lease has expired (its node died mid-attempt): the sweep re-queues it. */
  stalledClaims: boolean;
}

/**
 * Reads a queue's outlook with `sql`, one row of `seconds` (until the earliest due item, negative
 * when overdue, NULL when none waits: SQL's greatest() would turn NULL into 0) and `stalled`.
 */
export async function readOutlook(db: MetadataQueryable, sql: string): Promise<QueueOutlook> {
  const { rows } = await db.query<{ seconds: number | null; stalled: boolean }>(sql);
  const { seconds, stalled } = rows[0];
  return { secondsUntilNextDue: seconds === null ? null : Math.max(0, seconds), stalledClaims: stalled };
}

export interface SendLoopSettings {
  /** Attempts in flight at once. */
  concurrency: number;
  /** How long a claim lasts: the attempt's deadline and time to record it. */
  leaseSeconds: number;
  maxAttempts: number;
  retryBaseSeconds: number;
  retryMaxSeconds: number;
  /** Stalled claims are looked for this often; also the longest the loop sleeps. */
  sweepSeconds: number;
  retentionDays: number;
}

export interface SendLoopKind<Item extends { attempts: number }, Outcome extends SendOutcome> {
  /** How log lines name an item and items ('webhook delivery', 'webhook deliveries'). */
  noun: { one: string; many: string };
  /** The queue whose writes are fenced by this leadership's epoch. */
  queue: (epoch: number) => OutboxQueue<Item, Outcome>;
  /** Makes one attempt; throws only when the outcome cannot be known (the sweep sends it again). */
  send: (item: Item) => Promise<SendResult<Outcome>>;
  /** The fields that identify an item in log lines. */
  logFields: (item: Item) => Record<string, unknown>;
  settings: SendLoopSettings;
  log: Log;
  /** Told of every attempt once it is recorded (the node's metrics). */
  onAttempt?: (outcome: Outcome) => void;
}

export interface SendLoop {
  /** Begins sending as the leader of this epoch. */
  start(epoch: number): void;
  /** Stops claiming; waits a little for attempts in flight (the sweep re-sends any left unfinished). */
  stop(): Promise<void>;
  /** Something was queued: look for due items now rather than at the next timer. */
  wake(): void;
}

const STOP_WAIT_MS = 2000;
const PURGE_EVERY_MS = 10 * 60_000;

/**
 * Seconds to wait after the n-th failed attempt (n ≥ 1): base · 2^(n−1), capped at max, then up to
 * 20% less at random, so receivers recovering from an outage are not hit by every retry at once.
 * Never more than the cap. `random` is in [0, 1).
 */
export function retryDelaySeconds(failedAttempts: number, baseSeconds: number, maxSeconds: number, random: number = Math.random()): number {
  const exponential = Math.min(maxSeconds, baseSeconds * 2 ** Math.max(0, failedAttempts - 1));
  return exponential * (1 - 0.2 * random);
}

export function createSendLoop<Item extends { attempts: number }, Outcome extends SendOutcome>(kind: SendLoopKind<Item, Outcome>): SendLoop {
  const { settings, log, noun } = kind;
  let queue: OutboxQueue<Item, Outcome>;
  const inFlight = new Set<Promise<void>>();
  let running = false;
  let pumping = false;
  let pumpAgain = false;
  let wakeTimer: NodeJS.Timeout | undefined;
  let sweepTimer: NodeJS.Timeout | undefined;
  let lastPurge = 0;

  /** Sends one claimed item and records what happened. */
  async function attempt(item: Item): Promise<void> {
    const result = await kind.send(item);
    // SendResult is Outcome without exactly these three fields.
    const outcome = {
      ...result,
      ok: result.error === null,
      retryInSeconds: retryDelaySeconds(item.attempts + 1, settings.retryBaseSeconds, settings.retryMaxSeconds),
      maxAttempts: settings.maxAttempts,
    } as Outcome;
    await queue.complete(item, outcome);
    kind.onAttempt?.(outcome);
    if (!outcome.ok) log.info({ ...kind.logFields(item), attempt: item.attempts + 1, ...result }, `${noun.one} attempt failed`);
  }

  function track(item: Item) {
    const work = attempt(item)
      .catch((err: unknown) => log.error({ err, ...kind.logFields(item) }, `${noun.one} outcome could not be recorded; the sweep will retry it`))
      .finally(() => {
        inFlight.delete(work);
        wake();
      });
    inFlight.add(work);
  }

  /** Claims what may be sent now; then sleeps until the next item is due (or the sweep). */
  async function pump() {
    if (!running) return;
    if (pumping) {
      pumpAgain = true;
      return;
    }
    pumping = true;
    try {
      do {
        pumpAgain = false;
        const free = settings.concurrency - inFlight.size;
        if (free <= 0) return;
        const claimed = await queue.claim(free, settings.leaseSeconds);
        if (!running) return;
        for (const item of claimed) track(item);
        if (claimed.length === free) pumpAgain = true;
      } while (pumpAgain && running);
      // Due now yet unclaimed means a limit of the kind holds it (a webhook at its own): the attempt
      // in flight wakes us when it ends (or, for a dead node's claim, the sweep does), so there is
      // nothing to poll for; nor when nothing waits, as the next wake or sweep finds what is queued.
      const { secondsUntilNextDue } = await queue.outlook();
      if (running) scheduleFor(secondsUntilNextDue);
    } catch (err) {
      log.warn({ err }, `${noun.many} could not be claimed; trying again at the next sweep`);
    } finally {
      pumping = false;
    }
  }

  /** Wakes the loop when the next item falls due; a later one than the sweep is the sweep's. */
  function scheduleFor(secondsUntilNextDue: number | null) {
    clearTimeout(wakeTimer);
    wakeTimer = undefined;
    if (secondsUntilNextDue === null || secondsUntilNextDue <= 0 || secondsUntilNextDue >= settings.sweepSeconds) return;
    wakeTimer = setTimeout(wake, Math.max(secondsUntilNextDue * 1000, 10));
    wakeTimer.unref();
  }

  function wake() {
    if (running) void pump();
  }

  async function sweep() {
    if (!running) return;
    try {
      const { secondsUntilNextDue, stalledClaims } = await queue.outlook();
      const requeued = stalledClaims ? await queue.requeueStalled() : 0;
      if (requeued > 0) log.warn({ requeued }, `${noun.many} interrupted mid-attempt were queued again`);
      if (Date.now() - lastPurge >= PURGE_EVERY_MS) {
        await queue.purge(settings.retentionDays);
        lastPurge = Date.now();
      }
      // Anything waiting is the pump's to claim or to time (an item queued on another node whose
      // wake was lost is found here at the latest); an empty queue needs nothing more.
      if (requeued > 0 || secondsUntilNextDue !== null) wake();
    } catch (err) {
      log.warn({ err }, `sweep of ${noun.many} failed; trying again at the next one`);
    }
  }

  return {
    start(epoch) {
      queue = kind.queue(epoch);
      running = true;
      sweepTimer = setInterval(() => void sweep(), settings.sweepSeconds * 1000);
      sweepTimer.unref();
      void sweep();
    },
    async stop() {
      running = false;
      clearInterval(sweepTimer);
      clearTimeout(wakeTimer);
      if (inFlight.size === 0) return;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.allSettled([...inFlight]), new Promise((resolve) => (timer = setTimeout(resolve, STOP_WAIT_MS)))]);
      clearTimeout(timer);
    },
    wake,
  };
}
