// The coarse limiter of provider calls: one per process, not per user, site or key. Requests are
// counted over the last minute, tokens over the current UTC day; a call is refused before it is
// sent when either is used up, and its tokens are counted once the provider reports them.

export type Refusal = 'rate_limited' | 'budget_exceeded';

export interface Usage {
  requests_last_minute: number;
  requests_per_minute: number;
  tokens_today: number;
  tokens_per_day: number;
}

export interface Limiter {
  /** Takes one request, or answers why not. */
  admit(): Refusal | null;
  /** Tokens a call used, as its provider reported them. */
  spend(tokens: number): void;
  usage(): Usage;
}

const MINUTE_MS = 60_000;

export function createLimiter(limits: { requestsPerMinute: number; tokensPerDay: number }, now: () => number = Date.now): Limiter {
  let sent: number[] = [];
  let day = '';
  let tokens = 0;
  const today = () => {
    const current = new Date(now()).toISOString().slice(0, 10);
    if (current !== day) {
      day = current;
      tokens = 0;
    }
  };
  const recent = () => {
    const since = now() - MINUTE_MS;
    sent = sent.filter((at) => at > since);
    return sent.length;
  };
  return {
    admit() {
      today();
      if (tokens >= limits.tokensPerDay) return 'budget_exceeded';
      if (recent() >= limits.requestsPerMinute) return 'rate_limited';
      sent.push(now());
      return null;
    },
    spend(used) {
      today();
      tokens += used;
    },
    usage() {
      today();
      return { requests_last_minute: recent(), requests_per_minute: limits.requestsPerMinute, tokens_today: tokens, tokens_per_day: limits.tokensPerDay };
    },
  };
}
