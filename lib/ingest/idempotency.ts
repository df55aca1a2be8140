// Idempotency keys of AI-fetch ingest: a request sent again with the same `Idempotency-Key` (a
// forwarder's resend after a timeout or a crash) gets the first answer and stores nothing more.
//
// The order, and why (docs/decisions.md): claim the key (answer NULL) → append to the journal
// (durable) → save the answer → 202. A claim is never an answer, so a crash before the append
// loses nothing: the resend finds an unanswered claim, waits out its lease, and stores the batch.
// A crash after the append but before the answer is saved can only make that resend store the
// batch a second time; no order makes the fetches and the key durable together, since they live
// in two stores, and this is the only one whose failure duplicates rather than loses.
import { createHash } from 'node:crypto';
import { PlumbError, validationFailed } from '../errors.ts';
import type { Log } from '../log.ts';
import type { MetadataQueryable } from '../stores/metadata/index.ts';

export const IDEMPOTENCY_HEADER = 'idempotency-key';
/** 1–200 visible ASCII characters, as the header is documented. */
const KEY_FORMAT = /^[\x21-\x7e]{1,200}$/;
/** How long an answer is given again. */
const KEY_LIFETIME = "interval '24 hours'";
/**
 * How long an unanswered claim keeps others waiting: a claim older than this belongs to a node
 * that died between the claim and the answer, and the next resend takes it over. An append takes
 * milliseconds, or fails and releases its claim, so a live request is never overtaken.
 */
const CLAIM_LEASE = "interval '60 seconds'";
const IN_PROGRESS_RETRY_SECONDS = 2;

/** The key a request carries, if any; a malformed one is refused as a bad field would be. */
export function idempotencyKeyOf(headers: Record<string, string | string[] | undefined>): string | undefined {
  const value = headers[IDEMPOTENCY_HEADER];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !KEY_FORMAT.test(value)) {
    throw validationFailed([{ field: 'Idempotency-Key', message: 'Idempotency-Key must be 1 to 200 visible ASCII characters, once' }]);
  }
  return value;
}

/** What identifies a request's content: a key reused for other content is refused, not answered. */
export const fingerprintOf = (body: unknown) => createHash('sha256').update(JSON.stringify(body)).digest('hex');

export interface Idempotent<T> {
  answer: T;
  /** True when the answer is the one given to an earlier request with the key. */
  replayed: boolean;
}

/**
 * Runs `store` once per (site, key) within 24 h and answers every request with the key with its
 * result. `store` must resolve only once what it stored is durable. A failed `store` releases
 * the key, so the request can be sent again.
 */
export async function once<T>(
  { db, log }: { db: MetadataQueryable; log: Log },
  { siteId, key, fingerprint }: { siteId: string; key: string; fingerprint: string },
  store: () => Promise<T>,
): Promise<Idempotent<T>> {
  for (;;) {
    // Takes the key when it is new, expired, or an abandoned claim.
    const claimed = await db.query(
      `INSERT INTO idempotency_keys (site_id, key, fingerprint) VALUES ($1, $2, $3)
       ON CONFLICT (site_id, key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, answer = NULL, created_at = now()
       WHERE idempotency_keys.created_at < now() - ${KEY_LIFETIME}
          OR (idempotency_keys.answer IS NULL AND idempotency_keys.created_at < now() - ${CLAIM_LEASE})
       RETURNING 1`,
      [siteId, key, fingerprint],
    );
    if (claimed.rowCount === 1) break;
    const { rows } = await db.query<{ fingerprint: string; answer: T | null }>('SELECT fingerprint, answer FROM idempotency_keys WHERE site_id = $1 AND key = $2', [siteId, key]);
    // Deleted by the sweep between the two statements: claim it again.
    if (rows.length === 0) continue;
    const [earlier] = rows;
    if (earlier.fingerprint !== fingerprint) throw new PlumbError(409, 'conflict', 'This Idempotency-Key was used for another request in the last 24 hours');
    if (earlier.answer === null) {
      throw new PlumbError(409, 'conflict', 'A request with this Idempotency-Key is in progress; retry shortly', { retry_after: IN_PROGRESS_RETRY_SECONDS });
    }
    return { answer: earlier.answer, replayed: true };
  }
  let answer: T;
  try {
    answer = await store();
  } catch (err) {
    // Left in place, the claim only delays a resend by its lease.
    await db
      .query('DELETE FROM idempotency_keys WHERE site_id = $1 AND key = $2 AND answer IS NULL', [siteId, key])
      .catch((releaseErr: Error) => log.warn({ err: releaseErr.message }, 'could not release an idempotency key'));
    throw err;
  }
  // The fetches are durable: the 202 stands even when the answer cannot be saved (the claim then
  // expires with its lease, and only a resend after that could store them again).
  await db
    .query('UPDATE idempotency_keys SET answer = $3 WHERE site_id = $1 AND key = $2', [siteId, key, JSON.stringify(answer)])
    .catch((err: Error) => log.warn({ err: err.message }, 'could not save the answer of an idempotency key'));
  return { answer, replayed: false };
}

/** Deletes keys older than 24 h; the leader's ingest sweep runs it. */
export async function pruneIdempotencyKeys(db: MetadataQueryable): Promise<number> {
  const { rowCount } = await db.query(`DELETE FROM idempotency_keys WHERE created_at < now() - ${KEY_LIFETIME}`);
  return rowCount;
}
