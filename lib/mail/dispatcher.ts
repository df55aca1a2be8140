// The mail dispatcher, run by the leader only: claims due messages, renders each from its
// template, sends it over SMTP and records the outcome (sent, or retried later with exponential
// backoff, or failed after the last attempt). A periodic sweep re-queues claims whose node died
// mid-send and purges old history. Nothing is held only in memory: a crash loses at most the
// knowledge that a message was being sent, and the sweep sends it again. Without an SMTP server
// the dispatcher discards what is queued instead, so nothing is ever sent, now or later.
import type { Log } from '../log.ts';
import { retryDelaySeconds } from '../webhooks/signing.ts';
import type { ClaimedMessage, MailOutcome, MailQueue } from './queue.ts';
import { type MailContext, renderMail } from './templates.ts';
import { MailSendError, type MailTransport } from './transport.ts';

export interface MailDispatcherSettings {
  maxAttempts: number;
  retryBaseSeconds: number;
  retryMaxSeconds: number;
  sweepSeconds: number;
  timeoutSeconds: number;
}

export interface MailDispatcherDeps {
  /** The queue whose writes are fenced by this leadership's epoch. */
  queue: (epoch: number) => MailQueue;
  /** null: no SMTP server is set, queued messages are discarded. */
  transport: MailTransport | null;
  context: MailContext;
  settings: MailDispatcherSettings;
  log: Log;
  /** Told of every attempt once it is recorded (the node's metrics). */
  onAttempt?: (outcome: MailOutcome) => void;
}

export interface MailDispatcher {
  start(epoch: number): void;
  stop(): Promise<void>;
  /** Something was queued: look for due messages now rather than at the next timer. */
  wake(): void;
}

/** Messages sent at once; a small instance's mail is a trickle. */
const CONCURRENCY = 4;
const LEASE_GRACE_SECONDS = 10;
const STOP_WAIT_MS = 2000;
const PURGE_EVERY_MS = 10 * 60_000;
const RETENTION_DAYS = 30;

export function createMailDispatcher(deps: MailDispatcherDeps): MailDispatcher {
  const { settings, log, transport } = deps;
  let queue: MailQueue;
  const inFlight = new Set<Promise<void>>();
  let running = false;
  let pumping = false;
  let pumpAgain = false;
  let wakeTimer: NodeJS.Timeout | undefined;
  let sweepTimer: NodeJS.Timeout | undefined;
  let lastPurge = 0;

  async function attempt(message: ClaimedMessage, sender: MailTransport): Promise<void> {
    let error: string | null = null;
    try {
      const rendered = renderMail(message.template, message.params, deps.context);
      await sender.send({ id: message.id, to: message.recipient, ...rendered });
    } catch (err) {
      if (!(err instanceof MailSendError)) log.error({ err, messageId: message.id }, 'mail message could not be rendered');
      error = err instanceof MailSendError ? err.reason : 'render_failed';
    }
    const outcome: MailOutcome = {
      ok: error === null,
      error,
      retryInSeconds: retryDelaySeconds(message.attempts + 1, settings.retryBaseSeconds, settings.retryMaxSeconds),
      maxAttempts: settings.maxAttempts,
    };
    await queue.complete(message, outcome);
    deps.onAttempt?.(outcome);
    if (error !== null) log.info({ messageId: message.id, template: message.template, attempt: message.attempts + 1, error }, 'mail delivery attempt failed');
  }

  function track(message: ClaimedMessage, sender: MailTransport) {
    const work = attempt(message, sender)
      .catch((err: unknown) => log.error({ err, messageId: message.id }, 'mail outcome could not be recorded; the sweep will retry it'))
      .finally(() => {
        inFlight.delete(work);
        wake();
      });
    inFlight.add(work);
  }

  async function pump() {
    if (!running) return;
    if (pumping) {
      pumpAgain = true;
      return;
    }
    pumping = true;
    try {
      if (!transport) {
        const discarded = await queue.discardWaiting();
        if (discarded > 0) log.info({ discarded }, 'mail discarded: no SMTP server is configured');
        return;
      }
      do {
        pumpAgain = false;
        const free = CONCURRENCY - inFlight.size;
        if (free <= 0) return;
        const claimed = await queue.claim(free, settings.timeoutSeconds * 3 + LEASE_GRACE_SECONDS);
        if (!running) return;
        for (const message of claimed) track(message, transport);
        if (claimed.length === free) pumpAgain = true;
      } while (pumpAgain && running);
      const dueIn = await queue.secondsUntilNextDue();
      if (running) schedule(dueIn !== null && dueIn > 0 ? dueIn * 1000 : settings.sweepSeconds * 1000);
    } catch (err) {
      log.warn({ err }, 'mail dispatcher could not claim messages; trying again at the next sweep');
    } finally {
      pumping = false;
    }
  }

  function schedule(ms: number) {
    clearTimeout(wakeTimer);
    wakeTimer = setTimeout(wake, Math.min(Math.max(ms, 10), settings.sweepSeconds * 1000));
    wakeTimer.unref();
  }

  function wake() {
    if (running) void pump();
  }

  async function sweep() {
    if (!running) return;
    try {
      const requeued = await queue.requeueStalled();
      if (requeued > 0) log.warn({ requeued }, 'mail interrupted mid-send was queued again');
      if (Date.now() - lastPurge >= PURGE_EVERY_MS) {
        await queue.purge(RETENTION_DAYS);
        lastPurge = Date.now();
      }
    } catch (err) {
      log.warn({ err }, 'mail sweep failed; trying again at the next one');
    }
    wake();
  }

  return {
    start(epoch) {
      queue = deps.queue(epoch);
      running = true;
      sweepTimer = setInterval(() => void sweep(), settings.sweepSeconds * 1000);
      sweepTimer.unref();
      void sweep();
    },
    async stop() {
      running = false;
      clearInterval(sweepTimer);
      clearTimeout(wakeTimer);
      if (inFlight.size > 0) {
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([Promise.allSettled([...inFlight]), new Promise((resolve) => (timer = setTimeout(resolve, STOP_WAIT_MS)))]);
        clearTimeout(timer);
      }
    },
    wake,
  };
}
