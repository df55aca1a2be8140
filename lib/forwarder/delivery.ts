// Delivers one batch of fetches whatever the server makes of it: a batch too large for it (413)
// is split in halves, each sent on its own, until every part fits; fetches it refuses as invalid
// are named and skipped; fetches it could not take for now (its per-item rate limit, a store
// unavailable) are sent again, with backoff. Every part and every resend has its own
// Idempotency-Key derived from the batch's, from what it holds, so after a crash the same batch
// is split and resent the same way, and the server answers the parts it already stored from
// their keys: nothing is dropped, nothing doubled.
import { createHash } from 'node:crypto';
import type { ErrorCode } from '../errors.ts';
import type { AiFetch } from '../ingest/schemas.ts';
import { backoffMs, createSender, ServerUnavailable, type SenderOptions, sleep } from './sender.ts';

/**
 * The per-item codes of a failure that passes (the statuses the sender retries for a whole
 * batch: 429, 500, 502, 503); any other code says the fetch itself is wrong.
 */
const TRANSIENT_ITEM_CODES: ReadonlySet<string> = new Set<ErrorCode>(['rate_limited', 'unavailable', 'not_ready', 'internal_error', 'bad_gateway']);

/** Fetches of the batch the server refused, by their index in it. */
export interface Refusal {
  indexes: number[];
  message: string;
  /** The server refused them as one request (a 400, or one fetch still too large), not item by item. */
  whole: boolean;
}

export interface Delivered {
  accepted: number;
  refusals: Refusal[];
  /** Some part was answered from its key: the server had stored it before. */
  replayed: boolean;
  /** How many requests the batch took beyond the first (splits and resends). */
  extraRequests: number;
}

/** The key of a part or resend: the batch's key and what sets the part apart, hashed. */
export const derivedKey = (key: string, part: string) => createHash('sha256').update(`${key}\n${part}`).digest('hex');

export function createDelivery(options: SenderOptions) {
  const send = createSender(options);

  return async function deliver(items: readonly AiFetch[], key: string): Promise<Delivered> {
    const delivered: Delivered = { accepted: 0, refusals: [], replayed: false, extraRequests: 0 };

    /** Sends the fetches at `indexes` of the batch under `partKey`; `round` counts resends of fetches refused for now. */
    async function sendPart(indexes: number[], partKey: string, round: number): Promise<void> {
      const outcome = await send(indexes.map((index) => items[index]), partKey);
      if (outcome.kind === 'refused') {
        if (outcome.status === 413 && indexes.length > 1) {
          const half = Math.ceil(indexes.length / 2);
          delivered.extraRequests += 2;
          await sendPart(indexes.slice(0, half), derivedKey(partKey, 'first half'), round);
          await sendPart(indexes.slice(half), derivedKey(partKey, 'second half'), round);
          return;
        }
        delivered.refusals.push({ indexes, message: `${outcome.status}: ${outcome.message}`, whole: true });
        return;
      }
      delivered.accepted += outcome.answer.accepted;
      if (outcome.replayed) delivered.replayed = true;
      const later: number[] = [];
      let laterCode = '';
      for (const result of outcome.answer.results) {
        if (result.status !== 'rejected') continue;
        const index = indexes[result.index];
        if (result.code !== undefined && TRANSIENT_ITEM_CODES.has(result.code)) {
          later.push(index);
          laterCode = result.code;
        } else {
          delivered.refusals.push({ indexes: [index], message: result.message ?? result.code ?? 'refused', whole: false });
        }
      }
      if (later.length === 0) return;
      const failure = `${later.length} of ${indexes.length} fetches refused for now (${laterCode})`;
      if (options.maxRetries !== undefined && round >= options.maxRetries) throw new ServerUnavailable(round + 1, later.length, failure);
      const delayMs = backoffMs(options, round);
      options.onRetry?.(failure, delayMs);
      await sleep(delayMs, options.signal);
      delivered.extraRequests++;
      // The resend's key names the fetches it holds: the same refusals after a restart give the same key.
      await sendPart(later, derivedKey(partKey, `resend ${round + 1}: ${later.join(',')}`), round + 1);
    }

    await sendPart(Array.from(items.keys()), key, 0);
    return delivered;
  };
}

export type Delivery = ReturnType<typeof createDelivery>;
