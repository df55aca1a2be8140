// The delivery dispatcher, run by the leader only (cluster/leader-jobs.ts): claims due deliveries
// up to the global and per-endpoint limits, signs each with the webhook's current secret and a
// fresh timestamp, sends it through the guarded client (destination checked again, connection
// pinned, no redirects, deadline), and records the outcome. A periodic sweep re-queues claims
// whose node died mid-attempt and purges old history. Nothing is held only in memory: a crash
// loses at most the knowledge that an attempt was in flight, and the sweep sends it again.
import type { SecretBox } from '../auth/secret-box.ts';
import type { Log } from '../log.ts';
import { guardedRequest, OutboundError } from '../net/guarded-fetch.ts';
import type { AttemptOutcome, ClaimedDelivery, DeliveryQueue } from './queue.ts';
import { deliveryHeaders, retryDelaySeconds } from './signing.ts';

export interface DispatcherSettings {
  concurrency: number;
  perEndpointConcurrency: number;
  timeoutSeconds: number;
  maxAttempts: number;
  retryBaseSeconds: number;
  retryMaxSeconds: number;
  sweepSeconds: number;
  retentionDays: number;
  allowDevelopmentTargets: boolean;
}

export interface DispatcherDeps {
  /** The queue whose writes are fenced by this leadership's epoch. */
  queue: (epoch: number) => DeliveryQueue;
  secrets: SecretBox;
  settings: DispatcherSettings;
  log: Log;
  /** DNS for deliveries (tests); default: the system resolver. */
  resolver?: (host: string) => Promise<string[]>;
  /** CA certificates to trust for https deliveries instead of the default store (tests). */
  ca?: string | Buffer;
  /** Told of every attempt once it is recorded (the node's metrics). */
  onAttempt?: (outcome: AttemptOutcome) => void;
}

export interface Dispatcher {
  /** Begins dispatching as the leader of this epoch. */
  start(epoch: number): void;
  /** Stops claiming; waits a little for attempts in flight (the sweep re-sends any left unfinished). */
  stop(): Promise<void>;
  /** Something was queued: look for due deliveries now rather than at the next timer. */
  wake(): void;
}

/** Longest a response body is read: receivers answer briefly, and nothing of it is kept. */
const MAX_RESPONSE_BYTES = 64 * 1024;
/**
 * A claim outlives the attempt's deadline by this much before the sweep may take it back: time to
 * record the outcome. Should a stalled event loop overrun it, the delivery is sent twice (receivers
 * deduplicate) and the late outcome is ignored (its claim token no longer matches).
 */
const LEASE_GRACE_SECONDS = 5;
const STOP_WAIT_MS = 2000;
const PURGE_EVERY_MS = 10 * 60_000;

export function createDispatcher(deps: DispatcherDeps): Dispatcher {
  const { secrets, settings, log } = deps;
  let queue: DeliveryQueue;
  const inFlight = new Set<Promise<void>>();
  let running = false;
  let pumping = false;
  let pumpAgain = false;
  let wakeTimer: NodeJS.Timeout | undefined;
  let sweepTimer: NodeJS.Timeout | undefined;
  let lastPurge = 0;

  /** Sends one claimed delivery and records what happened. */
  async function attempt(delivery: ClaimedDelivery): Promise<void> {
    const startedAt = new Date();
    const started = performance.now();
    let responseStatus: number | null = null;
    let error: string | null = null;
    const secret = secrets.open(delivery.secret_sealed, delivery.webhook_id);
    if (secret === null) {
      // The JWT secret changed since the webhook was created: it must be rotated to sign again.
      error = 'secret_unavailable';
    } else {
      const url = new URL(delivery.url);
      if (url.protocol !== 'https:' && !settings.allowDevelopmentTargets) {
        error = 'invalid_url';
      } else {
        try {
          const headers = deliveryHeaders(secret, delivery.body, { eventId: delivery.event_id, deliveryId: delivery.id }, Math.floor(Date.now() / 1000));
          const res = await guardedRequest(url, {
            method: 'POST',
            headers,
            body: delivery.body,
            timeoutMs: settings.timeoutSeconds * 1000,
            maxBytes: MAX_RESPONSE_BYTES,
            allowPrivate: settings.allowDevelopmentTargets,
            resolver: deps.resolver,
            ca: deps.ca,
          });
          responseStatus = res.status;
          if (res.status >= 300 && res.status < 400) error = 'redirect';
          else if (res.status < 200 || res.status >= 300) error = 'http_status';
        } catch (err) {
          if (!(err instanceof OutboundError)) throw err;
          error = err.kind;
        }
      }
    }
    const ok = error === null;
    const outcome: AttemptOutcome = {
      ok,
      responseStatus,
      error,
      startedAt,
      durationMs: performance.now() - started,
      retryInSeconds: retryDelaySeconds(delivery.attempts + 1, settings.retryBaseSeconds, settings.retryMaxSeconds),
      maxAttempts: settings.maxAttempts,
    };
    await queue.complete(delivery, outcome);
    deps.onAttempt?.(outcome);
    if (!ok) log.info({ deliveryId: delivery.id, webhookId: delivery.webhook_id, attempt: delivery.attempts + 1, error, responseStatus }, 'webhook delivery attempt failed');
  }

  function track(delivery: ClaimedDelivery) {
    const work = attempt(delivery)
      .catch((err: unknown) => log.error({ err, deliveryId: delivery.id }, 'webhook delivery could not be recorded; the sweep will retry it'))
      .finally(() => {
        inFlight.delete(work);
        wake();
      });
    inFlight.add(work);
  }

  /** Claims what may be sent now; then sleeps until the next delivery is due (or the sweep). */
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
        const claimed = await queue.claim(free, settings.perEndpointConcurrency, settings.timeoutSeconds + LEASE_GRACE_SECONDS);
        if (!running) return;
        for (const delivery of claimed) track(delivery);
        if (claimed.length === free) pumpAgain = true;
      } while (pumpAgain && running);
      // Due now yet unclaimed means its webhook is at its limit: the attempt in flight wakes us
      // when it ends (or, for a dead node's claim, the sweep does), so there is nothing to poll for.
      const dueIn = await queue.secondsUntilNextDue();
      if (running) schedule(dueIn !== null && dueIn > 0 ? dueIn * 1000 : settings.sweepSeconds * 1000);
    } catch (err) {
      log.warn({ err }, 'webhook dispatcher could not claim deliveries; trying again at the next sweep');
    } finally {
      pumping = false;
    }
  }

  function schedule(ms: number) {
    clearTimeout(wakeTimer);
    // Capped by the sweep interval: a delivery queued on another node is found by then at the latest.
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
      if (requeued > 0) log.warn({ requeued }, 'webhook deliveries interrupted mid-attempt were queued again');
      if (Date.now() - lastPurge >= PURGE_EVERY_MS) {
        await queue.purge(settings.retentionDays);
        lastPurge = Date.now();
      }
    } catch (err) {
      log.warn({ err }, 'webhook sweep failed; trying again at the next one');
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
      if (inFlight.size === 0) return;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.allSettled([...inFlight]), new Promise((resolve) => (timer = setTimeout(resolve, STOP_WAIT_MS)))]);
      clearTimeout(timer);
    },
    wake,
  };
}
