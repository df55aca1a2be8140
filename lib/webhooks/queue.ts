// Every write the delivery dispatcher makes, in one place: claim due deliveries, record an
// attempt's outcome, re-queue stalled claims, drop history past retention. Only the leader calls
// these, and every write runs through `write`: the leader's fenced transaction (its epoch checked
// against leader_epoch in the same transaction), so a deposed leader changes nothing. Times are the
// database's clock (now()), so nodes with skewed clocks agree on what is due.
import { type OutboxQueue, readOutlook, type SendOutcome, type TransactionRunner } from '../outbox/send-loop.ts';
import type { MetadataQueryable, MetadataStore } from '../stores/metadata/index.ts';

/** A delivery claimed for one attempt, with what sending it needs. */
export interface ClaimedDelivery {
  id: string;
  event_id: string;
  webhook_id: string;
  body: string;
  /** Attempts finished before this one. */
  attempts: number;
  claim_token: string;
  url: string;
  secret_sealed: string;
}

/** `error` is a safe category ('http_status', 'redirect', 'timeout', 'blocked_address', …). */
export interface AttemptOutcome extends SendOutcome {
  responseStatus: number | null;
  startedAt: Date;
  durationMs: number;
}

/**
 * The outbox queue of webhook deliveries: an attempt makes a delivery succeeded, retrying or (out
 * of attempts) failed, and every attempt is kept in webhook_delivery_attempts. Its claim also keeps
 * to a limit per webhook.
 */
export interface DeliveryQueue extends Omit<OutboxQueue<ClaimedDelivery, AttemptOutcome>, 'claim'> {
  /**
   * Marks up to `limit` due deliveries as processing and returns them, oldest due first, never
   * letting one webhook have more than `perEndpoint` in processing (counting claims already out).
   * A claim expires after `leaseSeconds`; the sweep then puts it back.
   */
  claim(limit: number, perEndpoint: number, leaseSeconds: number): Promise<ClaimedDelivery[]>;
  /** Deletes deliveries, events and deleted webhooks older than the retention. */
  purge(retentionDays: number): Promise<void>;
}

/**
 * Due deliveries, oldest due first, at most `$2` in processing per webhook (claims already out
 * count), `$1` in all; each claimed with a fresh token and a lease of `$3` seconds.
 */
const CLAIM = `
  WITH busy AS (
    SELECT webhook_id, count(*)::int AS n FROM webhook_deliveries WHERE status = 'processing' GROUP BY webhook_id
  ), ranked AS (
    SELECT d.id, d.webhook_id, d.next_attempt_at, d.created_at,
           row_number() OVER (PARTITION BY d.webhook_id ORDER BY d.next_attempt_at, d.created_at, d.id) AS rank
      FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
     WHERE d.status IN ('pending', 'retrying') AND d.next_attempt_at <= now() AND w.enabled AND w.deleted_at IS NULL
  ), chosen AS (
    SELECT r.id FROM ranked r LEFT JOIN busy b ON b.webhook_id = r.webhook_id
     WHERE r.rank + coalesce(b.n, 0) <= $2
     ORDER BY r.next_attempt_at, r.created_at, r.id
     LIMIT $1
  )
  UPDATE webhook_deliveries d
     SET status = 'processing', claim_token = gen_random_uuid(), claimed_at = now(),
         lease_expires_at = now() + make_interval(secs => $3), updated_at = now()
    FROM chosen c, webhooks w
   WHERE d.id = c.id AND w.id = d.webhook_id AND d.status IN ('pending', 'retrying')
  RETURNING d.id, d.event_id, d.webhook_id, d.body, d.attempts, d.claim_token, w.url, w.secret_sealed`;

/** Only this claim's row changes: a deleted webhook's (cancelled) or a swept claim stays as it is. */
const RECORD_OUTCOME = `
  UPDATE webhook_deliveries
     SET attempts = attempts + 1,
         status = CASE WHEN $2 THEN 'succeeded' WHEN attempts + 1 >= $6 THEN 'failed' ELSE 'retrying' END,
         next_attempt_at = CASE WHEN $2 OR attempts + 1 >= $6 THEN next_attempt_at ELSE now() + make_interval(secs => $5) END,
         completed_at = CASE WHEN $2 OR attempts + 1 >= $6 THEN now() END,
         response_status = $3, error = $4,
         claim_token = NULL, lease_expires_at = NULL, updated_at = now()
   WHERE id = $1 AND status = 'processing' AND claim_token = $7`;

const RECORD_ATTEMPT = `
  INSERT INTO webhook_delivery_attempts (delivery_id, attempt, started_at, duration_ms, response_status, error)
  SELECT id, $2, $3, $4, $5, $6 FROM webhook_deliveries WHERE id = $1`;

/**
 * Expired claims go back to the queue, due now. The interrupted attempt's outcome is unknown (the
 * receiver may have it): it is recorded, not counted, and the delivery is sent again; receivers
 * deduplicate by id.
 */
const REQUEUE_STALLED = `
  WITH stalled AS (
    UPDATE webhook_deliveries
       SET status = CASE WHEN attempts = 0 THEN 'pending' ELSE 'retrying' END,
           next_attempt_at = now(), claim_token = NULL, lease_expires_at = NULL, updated_at = now()
     WHERE status = 'processing' AND lease_expires_at < now()
    RETURNING id, attempts, claimed_at
  )
  INSERT INTO webhook_delivery_attempts (delivery_id, attempt, started_at, duration_ms, response_status, error)
  SELECT id, attempts + 1, coalesce(claimed_at, now()), NULL, NULL, 'interrupted' FROM stalled`;

/** Oldest first: deliveries (with their attempts), then events and deleted webhooks left without any. */
const PURGE = [
  `DELETE FROM webhook_deliveries WHERE status <> 'processing' AND created_at < now() - make_interval(days => $1)`,
  `DELETE FROM webhook_events e WHERE e.created_at < now() - make_interval(days => $1)
      AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id)`,
  `DELETE FROM webhooks w WHERE w.deleted_at < now() - make_interval(days => $1)
      AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.webhook_id = w.id)`,
];

/** Seconds until the next delivery is due (null when none waits), and whether a claim has expired. */
const OUTLOOK = `
  SELECT (SELECT extract(epoch FROM min(d.next_attempt_at) - now())::float8
            FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
           WHERE d.status IN ('pending', 'retrying') AND w.enabled AND w.deleted_at IS NULL) AS seconds,
         EXISTS (SELECT 1 FROM webhook_deliveries WHERE status = 'processing' AND lease_expires_at < now()) AS stalled`;

export function createDeliveryQueue(store: () => MetadataStore, write: TransactionRunner = (fn) => store().transaction(fn)): DeliveryQueue {
  return {
    async claim(limit, perEndpoint, leaseSeconds) {
      if (limit <= 0) return [];
      return (await write((tx) => tx.query<ClaimedDelivery>(CLAIM, [limit, perEndpoint, leaseSeconds]))).rows;
    },

    async complete(delivery, outcome) {
      await write(async (tx) => {
        await tx.query(RECORD_OUTCOME, [delivery.id, outcome.ok, outcome.responseStatus, outcome.error, outcome.retryInSeconds, outcome.maxAttempts, delivery.claim_token]);
        await tx.query(RECORD_ATTEMPT, [delivery.id, delivery.attempts + 1, outcome.startedAt, Math.round(outcome.durationMs), outcome.responseStatus, outcome.error]);
      });
    },

    async requeueStalled() {
      return (await write((tx) => tx.query(REQUEUE_STALLED))).rowCount;
    },

    async purge(retentionDays) {
      await write(async (tx) => {
        for (const statement of PURGE) await tx.query(statement, [retentionDays]);
      });
    },

    outlook: () => readOutlook(store(), OUTLOOK),
  };
}

/** Deliveries not finished, by status (pending, retrying, processing): the queue's depth for /metrics. */
export async function deliveryBacklog(store: MetadataQueryable): Promise<Record<string, number>> {
  const { rows } = await store.query<{ status: string; n: number }>(
    `SELECT status, count(*)::int AS n FROM webhook_deliveries WHERE status IN ('pending', 'retrying', 'processing') GROUP BY status`,
  );
  return Object.fromEntries(rows.map((row) => [row.status, row.n]));
}
