// Every write the mail dispatcher makes, in one place: claim due messages, record an attempt's
// outcome, re-queue stalled claims, discard messages when no SMTP server is set, drop old history.
// Only the leader calls these, each through `write` (its fenced transaction), so a deposed leader
// changes nothing. Times are the database's clock, so nodes with skewed clocks agree on what is due.
import { type OutboxQueue, readOutlook, type SendOutcome, type TransactionRunner } from '../outbox/send-loop.ts';
import type { MetadataQueryable, MetadataStore } from '../stores/metadata/index.ts';

/** A message claimed for one attempt. */
export interface ClaimedMessage {
  id: string;
  recipient: string;
  template: string;
  params: unknown;
  locale: string;
  /** Attempts finished before this one. */
  attempts: number;
  claim_token: string;
}

/**
 * The outbox queue of mail: claims come oldest due first; a finished message (sent, failed,
 * discarded) loses its params; an outcome's `error` is the server's answer ('550 mailbox
 * unavailable') or a category ('timeout', …).
 */
export interface MailQueue extends OutboxQueue<ClaimedMessage, SendOutcome> {
  /** No SMTP server: every waiting message is discarded (and its params cleared). Returns how many. */
  discardWaiting(): Promise<number>;
}

const CLAIM = `
  WITH chosen AS (
    SELECT id FROM mail_messages
     WHERE status IN ('pending', 'retrying') AND next_attempt_at <= now()
     ORDER BY next_attempt_at, created_at, id
     LIMIT $1 FOR UPDATE SKIP LOCKED
  )
  UPDATE mail_messages m
     SET status = 'processing', claim_token = gen_random_uuid(), claimed_at = now(),
         lease_expires_at = now() + make_interval(secs => $2), updated_at = now()
    FROM chosen c
   WHERE m.id = c.id
  RETURNING m.id, m.recipient, m.template, m.params, m.locale, m.attempts, m.claim_token`;

/** Only this claim's row changes: a swept claim's late outcome is ignored. */
const RECORD_OUTCOME = `
  UPDATE mail_messages
     SET attempts = attempts + 1,
         status = CASE WHEN $2 THEN 'sent' WHEN attempts + 1 >= $5 THEN 'failed' ELSE 'retrying' END,
         next_attempt_at = CASE WHEN $2 OR attempts + 1 >= $5 THEN next_attempt_at ELSE now() + make_interval(secs => $4) END,
         completed_at = CASE WHEN $2 OR attempts + 1 >= $5 THEN now() END,
         params = CASE WHEN $2 OR attempts + 1 >= $5 THEN '{}'::jsonb ELSE params END,
         error = $3, claim_token = NULL, lease_expires_at = NULL, updated_at = now()
   WHERE id = $1 AND status = 'processing' AND claim_token = $6`;

/**
 * Expired claims go back to the queue, due now. Whether the server had taken the message is
 * unknown: it is sent again (at least once; its Message-ID stays the same, so clients can tell).
 */
const REQUEUE_STALLED = `
  UPDATE mail_messages
     SET status = CASE WHEN attempts = 0 THEN 'pending' ELSE 'retrying' END,
         next_attempt_at = now(), claim_token = NULL, lease_expires_at = NULL, updated_at = now()
   WHERE status = 'processing' AND lease_expires_at < now()`;

const DISCARD = `
  UPDATE mail_messages
     SET status = 'discarded', params = '{}'::jsonb, error = 'mail_not_configured', completed_at = now(), updated_at = now()
   WHERE status IN ('pending', 'retrying', 'processing')`;

const PURGE = `DELETE FROM mail_messages WHERE status IN ('sent', 'failed', 'discarded') AND created_at < now() - make_interval(days => $1)`;

/** Seconds until the next message is due (null when none waits), and whether a claim has expired. */
const OUTLOOK = `
  SELECT (SELECT extract(epoch FROM min(next_attempt_at) - now())::float8
            FROM mail_messages WHERE status IN ('pending', 'retrying')) AS seconds,
         EXISTS (SELECT 1 FROM mail_messages WHERE status = 'processing' AND lease_expires_at < now()) AS stalled`;

export function createMailQueue(store: () => MetadataStore, write: TransactionRunner = (fn) => store().transaction(fn)): MailQueue {
  return {
    async claim(limit, leaseSeconds) {
      if (limit <= 0) return [];
      return (await write((tx) => tx.query<ClaimedMessage>(CLAIM, [limit, leaseSeconds]))).rows;
    },
    async complete(message, outcome) {
      await write((tx) => tx.query(RECORD_OUTCOME, [message.id, outcome.ok, outcome.error, outcome.retryInSeconds, outcome.maxAttempts, message.claim_token]));
    },
    async requeueStalled() {
      return (await write((tx) => tx.query(REQUEUE_STALLED))).rowCount;
    },
    async discardWaiting() {
      return (await write((tx) => tx.query(DISCARD))).rowCount;
    },
    async purge(retentionDays) {
      await write((tx) => tx.query(PURGE, [retentionDays]));
    },
    outlook: () => readOutlook(store(), OUTLOOK),
  };
}

/** Messages by status that matter to operators (pending, retrying, processing, failed): for /metrics and the system page. */
export async function mailBacklog(store: MetadataQueryable): Promise<Record<string, number>> {
  const { rows } = await store.query<{ status: string; n: number }>(
    `SELECT status, count(*)::int AS n FROM mail_messages WHERE status IN ('pending', 'retrying', 'processing', 'failed') GROUP BY status`,
  );
  return Object.fromEntries(rows.map((row) => [row.status, row.n]));
}
