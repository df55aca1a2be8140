// Google's side of the plugin: the OAuth 2.0 web flow (authorization URL with PKCE, code exchange,
// refresh) and the two Search Console calls it makes (sites.list, searchAnalytics.query), all through
// the host's guarded client. Quota refusals (429, or 403 with a rate-limit reason) are waited out
// with an exponential backoff (or the answer's Retry-After) before the call is given up.
import { createHash, randomBytes } from 'node:crypto';
import type { PluginHost } from '../../lib/plugins/api.ts';

/** The settings this file reads (see index.ts). */
export interface GoogleSettings {
  client_id?: string;
  client_secret?: string;
  authorize_url: string;
  token_url: string;
  api_url: string;
  allow_private_endpoints: boolean;
  retry_base_ms: number;
}

/** Read-only access to Search Console data: all the plugin needs. */
const SCOPE = 'https://www.googleapis.com/auth/webmasters.readonly';
/** Calls given up after this many quota refusals in a row. */
const MAX_ATTEMPTS = 6;
const MAX_WAIT_MS = 60_000;

/** A failed call to Google; `message` is safe to store and show (never a token or a response body). */
export class GoogleError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.name = 'GoogleError';
    this.status = status;
  }
}

export interface Property {
  site_url: string;
  permission_level: string;
}

export interface AnalyticsRow {
  keys: string[];
  clicks: number;
  impressions: number;
  ctr: number;
  position: number;
}

/** A PKCE pair: the verifier kept (in the sealed state) and its S256 challenge sent. */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export function authorizationUrl(settings: GoogleSettings, redirectUri: string, state: string, challenge: string): string {
  const url = new URL(settings.authorize_url);
  url.search = new URLSearchParams({
    client_id: settings.client_id ?? '',
    redirect_uri: redirectUri,
    response_type: 'code',
    scope: SCOPE,
    // A refresh token, asked for again on every consent so a reconnect always gets one.
    access_type: 'offline',
    prompt: 'consent',
    state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  }).toString();
  return url.toString();
}

type Fetch = PluginHost['fetch'];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Google's error reason (`rateLimitExceeded`, …) and message from an error answer, if it has them. */
function errorOf(body: Buffer): { reason?: string; message?: string; status?: string } {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { error?: { message?: string; status?: string; errors?: { reason?: string }[] } | string; error_description?: string };
    if (typeof parsed.error === 'string') return { reason: parsed.error, message: parsed.error_description };
    return { reason: parsed.error?.errors?.[0]?.reason, message: parsed.error?.message, status: parsed.error?.status };
  } catch {
    return {};
  }
}

const QUOTA_REASONS = new Set(['rateLimitExceeded', 'userRateLimitExceeded', 'quotaExceeded', 'dailyLimitExceeded']);
const isQuotaRefusal = (status: number, error: ReturnType<typeof errorOf>) => {
  if (status === 429) return true;
  if (status !== 403) return false;
  return QUOTA_REASONS.has(error.reason ?? '') || error.status === 'RESOURCE_EXHAUSTED';
};

export function createGoogleClient(fetch: Fetch, settings: GoogleSettings) {
  const call = async (url: string, init: { method: string; headers: Record<string, string>; body?: string }, what: string) => {
    for (let attempt = 1; ; attempt++) {
      let res: Awaited<ReturnType<Fetch>>;
      try {
        res = await fetch(url, { ...init, timeoutMs: 30_000, maxBytes: 20 * 1_048_576, allowPrivate: settings.allow_private_endpoints });
      } catch (err) {
        throw new GoogleError(0, `${what}: ${(err as Error).message}`);
      }
      if (res.status >= 200 && res.status < 300) return JSON.parse(res.body.toString('utf8')) as unknown;
      const error = errorOf(res.body);
      if (!isQuotaRefusal(res.status, error) || attempt >= MAX_ATTEMPTS) {
        throw new GoogleError(res.status, `${what} answered ${res.status}${error.reason ? ` (${error.reason})` : ''}`);
      }
      const retryAfter = Number(res.headers['retry-after']);
      const backoff = settings.retry_base_ms * 2 ** (attempt - 1);
      await sleep(Math.min(Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : backoff, MAX_WAIT_MS));
    }
  };
  const tokenRequest = async (form: Record<string, string>, what: string) => {
    const answer = (await call(
      settings.token_url,
      {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
        body: new URLSearchParams({ ...form, client_id: settings.client_id ?? '', client_secret: settings.client_secret ?? '' }).toString(),
      },
      what,
    )) as { access_token?: unknown; refresh_token?: unknown; expires_in?: unknown };
    if (typeof answer.access_token !== 'string') throw new GoogleError(502, `${what} answered no access token`);
    return { accessToken: answer.access_token, refreshToken: typeof answer.refresh_token === 'string' ? answer.refresh_token : undefined };
  };
  const bearer = (accessToken: string) => ({ Authorization: `Bearer ${accessToken}`, Accept: 'application/json' });

  return {
    /** The authorization code for tokens; Google sends a refresh token with `access_type=offline`. */
    async exchangeCode(code: string, verifier: string, redirectUri: string) {
      const tokens = await tokenRequest({ grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: redirectUri }, 'Google’s token endpoint');
      if (!tokens.refreshToken) throw new GoogleError(502, 'Google’s token endpoint answered no refresh token');
      return { accessToken: tokens.accessToken, refreshToken: tokens.refreshToken };
    },
    async accessToken(refreshToken: string): Promise<string> {
      return (await tokenRequest({ grant_type: 'refresh_token', refresh_token: refreshToken }, 'Google’s token endpoint')).accessToken;
    },
    async properties(accessToken: string): Promise<Property[]> {
      const answer = (await call(`${settings.api_url}/sites`, { method: 'GET', headers: bearer(accessToken) }, 'Search Console sites.list')) as {
        siteEntry?: { siteUrl?: string; permissionLevel?: string }[];
      };
      return (answer.siteEntry ?? [])
        .filter((entry): entry is { siteUrl: string; permissionLevel?: string } => typeof entry.siteUrl === 'string')
        .map((entry) => ({ site_url: entry.siteUrl, permission_level: entry.permissionLevel ?? 'unknown' }))
        .sort((a, b) => a.site_url.localeCompare(b.site_url));
    },
    /** One page of searchAnalytics.query for one day. */
    async queryPage(accessToken: string, property: string, day: string, dimensions: readonly string[], startRow: number, rowLimit: number): Promise<AnalyticsRow[]> {
      const answer = (await call(
        `${settings.api_url}/sites/${encodeURIComponent(property)}/searchAnalytics/query`,
        {
          method: 'POST',
          headers: { ...bearer(accessToken), 'Content-Type': 'application/json' },
          body: JSON.stringify({ startDate: day, endDate: day, dimensions, type: 'web', dataState: 'all', startRow, rowLimit }),
        },
        'Search Console searchAnalytics.query',
      )) as { rows?: AnalyticsRow[] };
      return answer.rows ?? [];
    },
  };
}

export type GoogleClient = ReturnType<typeof createGoogleClient>;
