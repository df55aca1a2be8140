// Sends one batch of fetches to `POST /api/sites/{id}/ingest/ai-fetch` until the server has
// answered it: 429, 503, other 5xx, a 409 for a key still in progress, timeouts and network
// errors are retried with exponential backoff (doubling from 1 s, capped at 60 s; Retry-After
// when the server gives one), for ever or `maxRetries` times. A 400 or a 413 refuses the batch
// as a whole (the delivery splits a 413's batch); 401, 403 and 404 mean the token or the site is
// wrong, and stop the forwarder.
import { VERSION } from '../brand.ts';
import type { AiFetch } from '../ingest/schemas.ts';

export interface BatchAnswer {
  accepted: number;
  rejected: number;
  results: { index: number; status: 'accepted' | 'rejected'; code?: string; message?: string }[];
}

export type SendOutcome =
  | { kind: 'stored'; answer: BatchAnswer; replayed: boolean }
  /** The server refused the batch whole (400, 413); retrying would get the same answer. */
  | { kind: 'refused'; status: number; message: string };

/** The forwarder cannot go on: a wrong token, site or URL. */
export class ForwarderStop extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ForwarderStop';
  }
}

/**
 * The server did not take a batch within the retries allowed (`--once`): the batch's position
 * stays unsaved, so the next run reads and sends its lines again, under the same keys.
 */
export class ServerUnavailable extends Error {
  constructor(attempts: number, fetches: number, lastFailure: string) {
    super(`gave up sending ${fetches} fetches after ${attempts} attempts (last: ${lastFailure}); their lines are sent again on the next run`);
    this.name = 'ServerUnavailable';
  }
}

export interface SenderOptions {
  url: string;
  siteId: string;
  token: string;
  timeoutMs?: number;
  backoffBaseMs?: number;
  backoffCapMs?: number;
  /** How often a failed attempt is retried before giving up with a ServerUnavailable; without it, until the server answers. */
  maxRetries?: number;
  /** Ends the waiting between attempts (and an attempt in flight) when the forwarder stops. */
  signal?: AbortSignal;
  onRetry?(reason: string, delayMs: number): void;
}

const USER_AGENT = `plumb-forward-ai-fetches/${VERSION}`;

/** `Retry-After` in milliseconds: delta-seconds or an HTTP date. */
function retryAfterMs(value: string | null): number | undefined {
  if (value === null) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

/** The wait before retry number `attempt` (from 0): doubling from the base, capped. */
export function backoffMs(options: Pick<SenderOptions, 'backoffBaseMs' | 'backoffCapMs'>, attempt: number): number {
  return Math.min(options.backoffCapMs ?? 60_000, (options.backoffBaseMs ?? 1000) * 2 ** attempt);
}

/** Waits `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', stop);
      resolve();
    }, ms);
    const stop = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', stop, { once: true });
  });
}

async function messageOf(res: Response): Promise<string> {
  const text = await res.text().catch(() => '');
  try {
    const body = JSON.parse(text) as { message?: unknown };
    if (typeof body.message === 'string') return body.message;
  } catch {
    // Not Plumb's JSON error (a proxy's page): its first words say enough.
  }
  return text.slice(0, 200) || res.statusText;
}

export function createSender(options: SenderOptions) {
  const endpoint = new URL(`api/sites/${encodeURIComponent(options.siteId)}/ingest/ai-fetch`, options.url.endsWith('/') ? options.url : `${options.url}/`);
  const { timeoutMs = 30_000, maxRetries, signal } = options;

  return async function send(items: readonly AiFetch[], idempotencyKey: string): Promise<SendOutcome> {
    const body = JSON.stringify({ items });
    for (let attempt = 0; ; attempt++) {
      const backoff = backoffMs(options, attempt);
      let retry: { reason: string; delayMs: number };
      try {
        const res = await fetch(endpoint, {
          method: 'POST',
          headers: { Authorization: `Bearer ${options.token}`, 'Content-Type': 'application/json', 'Idempotency-Key': idempotencyKey, 'User-Agent': USER_AGENT },
          body,
          redirect: 'manual',
          signal: signal ? AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs),
        });
        const status = res.status;
        if (status === 202) return { kind: 'stored', answer: (await res.json()) as BatchAnswer, replayed: res.headers.get('idempotent-replayed') === 'true' };
        const retryAfter = retryAfterMs(res.headers.get('retry-after'));
        const message = await messageOf(res);
        if (status === 401) throw new ForwarderStop(`the server refused the token (401: ${message}); check --token-file or PLUMB_FORWARD_TOKEN`);
        if (status === 403) throw new ForwarderStop(`the token may not write AI fetches to site ${options.siteId} (403: ${message}); it needs the ai-fetch:write scope and an editor role on the site`);
        if (status === 404) throw new ForwarderStop(`site ${options.siteId} was not found, or the token has no access to it (404: ${message}); check --site and --url`);
        // A key in progress comes with Retry-After; without it, the key was used for other
        // content: this batch's key names its file, offsets and bytes, so only this forwarder's
        // own earlier send of the same lines (by a version that read them differently) has it.
        if (status === 409 && retryAfter === undefined) return { kind: 'stored', answer: { accepted: 0, rejected: 0, results: [] }, replayed: true };
        if (status === 429 || status === 409 || status >= 500) {
          retry = { reason: `${status}: ${message}`, delayMs: retryAfter ?? backoff };
        } else if (status === 400 || status === 413 || status === 422) {
          return { kind: 'refused', status, message };
        } else {
          throw new ForwarderStop(`unexpected answer ${status} from ${endpoint.href}: ${message}${status >= 300 && status < 400 ? ' (give --url the final address)' : ''}`);
        }
      } catch (err) {
        if (err instanceof ForwarderStop || signal?.aborted) throw err;
        retry = { reason: (err as Error).name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : `${(err as Error).message}${(err as { cause?: Error }).cause ? ` (${(err as { cause: Error }).cause.message})` : ''}`, delayMs: backoff };
      }
      if (maxRetries !== undefined && attempt >= maxRetries) throw new ServerUnavailable(attempt + 1, items.length, retry.reason);
      options.onRetry?.(retry.reason, retry.delayMs);
      await sleep(retry.delayMs, signal);
    }
  };
}

export type Sender = ReturnType<typeof createSender>;
