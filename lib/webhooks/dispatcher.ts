// The delivery dispatcher, run by the leader only (cluster/leader-jobs.ts): the outbox send loop
// (lib/outbox/send-loop.ts) over webhook deliveries. It claims due deliveries up to the global and
// per-endpoint limits, signs each with the webhook's current secret and a fresh timestamp, sends it
// through the guarded client (destination checked again, connection pinned, no redirects,
// deadline), and records the outcome; the loop's sweep re-queues claims whose node died
// mid-attempt and purges old history.
import type { SecretBox } from '../auth/secret-box.ts';
import type { Log } from '../log.ts';
import { guardedRequest, OutboundError } from '../net/guarded-fetch.ts';
import { createSendLoop, type SendLoop, type SendResult } from '../outbox/send-loop.ts';
import type { AttemptOutcome, ClaimedDelivery, DeliveryQueue } from './queue.ts';
import { deliveryHeaders } from './signing.ts';

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

/** Longest a response body is read: receivers answer briefly, and nothing of it is kept. */
const MAX_RESPONSE_BYTES = 64 * 1024;
/**
 * A claim outlives the attempt's deadline by this much before the sweep may take it back: time to
 * record the outcome. Should a stalled event loop overrun it, the delivery is sent twice (receivers
 * deduplicate) and the late outcome is ignored (its claim token no longer matches).
 */
const LEASE_GRACE_SECONDS = 5;

export function createDispatcher(deps: DispatcherDeps): SendLoop {
  const { secrets, settings } = deps;

  /** Sends one claimed delivery; a receiver's refusal or an unreachable one is an error, not a throw. */
  async function send(delivery: ClaimedDelivery): Promise<SendResult<AttemptOutcome>> {
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
    return { responseStatus, error, startedAt, durationMs: performance.now() - started };
  }

  return createSendLoop<ClaimedDelivery, AttemptOutcome>({
    noun: { one: 'webhook delivery', many: 'webhook deliveries' },
    queue(epoch) {
      const queue = deps.queue(epoch);
      return { ...queue, claim: (limit, leaseSeconds) => queue.claim(limit, settings.perEndpointConcurrency, leaseSeconds) };
    },
    send,
    logFields: (delivery) => ({ deliveryId: delivery.id, webhookId: delivery.webhook_id }),
    settings: {
      concurrency: settings.concurrency,
      leaseSeconds: settings.timeoutSeconds + LEASE_GRACE_SECONDS,
      maxAttempts: settings.maxAttempts,
      retryBaseSeconds: settings.retryBaseSeconds,
      retryMaxSeconds: settings.retryMaxSeconds,
      sweepSeconds: settings.sweepSeconds,
      retentionDays: settings.retentionDays,
    },
    log: deps.log,
    onAttempt: deps.onAttempt,
  });
}
