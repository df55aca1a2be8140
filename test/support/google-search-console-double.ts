// A local double of Google's OAuth 2.0 endpoints and the two Search Console calls the
// search-console plugin makes, on 127.0.0.1: /o/oauth2/v2/auth (consents at once and redirects
// back with a one-time code), /token (the code for tokens, checking the client, the redirect URI and
// the PKCE S256 verifier; a refresh token for access tokens), /webmasters/v3/sites (sites.list) and
// /webmasters/v3/sites/:site/searchAnalytics/query (one day's rows of [date, <dimension>], paged by
// startRow/rowLimit). It can refuse calls with 429 (quota), fail them with 500 (an outage) or answer
// them late, and records every searchAnalytics call.
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Dimension = 'query' | 'page' | 'country' | 'device';
export interface DoubleRow {
  key: string;
  clicks: number;
  impressions: number;
  position: number;
}
/** A property's data: for each day (YYYY-MM-DD) and dimension, its rows. */
export type PropertyData = Record<string, Record<Dimension, DoubleRow[]>>;

export interface AnalyticsCall {
  property: string;
  day: string;
  dimension: string;
  startRow: number;
  rowLimit: number;
  status: number;
}

export interface GoogleDouble {
  url: string;
  clientId: string;
  clientSecret: string;
  /** The refresh token the next code exchange hands out. */
  refreshToken: string;
  /** Every searchAnalytics.query call, in order, with the status it got. */
  calls: AnalyticsCall[];
  /** Refuse the next `count` searchAnalytics calls with 429 and this Retry-After (seconds; none when 0), or 403 rateLimitExceeded. */
  refuseQuota(count: number, how?: { status: 429 | 403; retryAfter?: number }): void;
  /** Let `count` more searchAnalytics calls succeed, then fail every later one with 500 until `recover()`. */
  failAfter(count: number): void;
  recover(): void;
  /** Answer every searchAnalytics call this many ms late (0: at once). */
  slow(ms: number): void;
  close(): Promise<void>;
}

async function bodyOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startGoogleDouble(properties: Record<string, PropertyData>): Promise<GoogleDouble> {
  const clientId = 'google-test-client.apps.example';
  const clientSecret = 'google-test-secret';
  const codes = new Map<string, { redirectUri: string; challenge: string }>();
  const accessTokens = new Set<string>();
  const calls: AnalyticsCall[] = [];
  let quota: { left: number; status: 429 | 403; retryAfter: number } = { left: 0, status: 429, retryAfter: 0 };
  let successesLeft = Number.POSITIVE_INFINITY;
  let delayMs = 0;

  const double: Omit<GoogleDouble, 'url' | 'close'> = {
    clientId,
    clientSecret,
    refreshToken: `1//refresh-${randomBytes(12).toString('hex')}`,
    calls,
    refuseQuota(count, how = { status: 429 }) {
      quota = { left: count, status: how.status, retryAfter: how.retryAfter ?? 0 };
    },
    failAfter(count) {
      successesLeft = count;
    },
    recover() {
      successesLeft = Number.POSITIVE_INFINITY;
    },
    slow(ms) {
      delayMs = ms;
    },
  };

  const server: Server = createServer(async (req, res) => {
    const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
      void res.writeHead(status, { 'Content-Type': 'application/json', ...headers }).end(JSON.stringify(body));
    const url = new URL(req.url ?? '/', 'http://double');
    const body = await bodyOf(req);
    if (url.pathname === '/o/oauth2/v2/auth') {
      const q = url.searchParams;
      const ok =
        q.get('client_id') === clientId &&
        q.get('response_type') === 'code' &&
        q.get('scope') === 'https://www.googleapis.com/auth/webmasters.readonly' &&
        q.get('access_type') === 'offline' &&
        q.get('code_challenge_method') === 'S256' &&
        q.get('code_challenge') &&
        q.get('redirect_uri') &&
        q.get('state');
      if (!ok) return json(400, { error: 'invalid_request' });
      const code = `4/${randomBytes(16).toString('hex')}`;
      codes.set(code, { redirectUri: q.get('redirect_uri')!, challenge: q.get('code_challenge')! });
      const back = new URL(q.get('redirect_uri')!);
      back.searchParams.set('state', q.get('state')!);
      back.searchParams.set('code', code);
      back.searchParams.set('scope', q.get('scope')!);
      return void res.writeHead(302, { Location: back.toString() }).end();
    }
    if (url.pathname === '/token' && req.method === 'POST') {
      const form = new URLSearchParams(body);
      if (form.get('client_id') !== clientId || form.get('client_secret') !== clientSecret) return json(401, { error: 'invalid_client' });
      const access = `ya29.${randomBytes(12).toString('hex')}`;
      if (form.get('grant_type') === 'authorization_code') {
        const issued = codes.get(form.get('code') ?? '');
        codes.delete(form.get('code') ?? '');
        const verifier = form.get('code_verifier') ?? '';
        if (!issued || issued.redirectUri !== form.get('redirect_uri') || createHash('sha256').update(verifier).digest('base64url') !== issued.challenge) {
          return json(400, { error: 'invalid_grant', error_description: 'Bad Request' });
        }
        accessTokens.add(access);
        return json(200, { access_token: access, expires_in: 3599, refresh_token: double.refreshToken, scope: 'https://www.googleapis.com/auth/webmasters.readonly', token_type: 'Bearer' });
      }
      if (form.get('grant_type') === 'refresh_token' && form.get('refresh_token') === double.refreshToken) {
        accessTokens.add(access);
        return json(200, { access_token: access, expires_in: 3599, token_type: 'Bearer' });
      }
      return json(400, { error: 'invalid_grant' });
    }
    if (!accessTokens.has((req.headers.authorization ?? '').replace(/^Bearer /, ''))) return json(401, { error: { code: 401, message: 'Request had invalid authentication credentials.', status: 'UNAUTHENTICATED' } });
    if (url.pathname === '/webmasters/v3/sites' && req.method === 'GET') {
      return json(200, { siteEntry: Object.keys(properties).map((siteUrl) => ({ siteUrl, permissionLevel: 'siteOwner' })) });
    }
    const query = /^\/webmasters\/v3\/sites\/([^/]+)\/searchAnalytics\/query$/.exec(url.pathname);
    if (query && req.method === 'POST') {
      const property = decodeURIComponent(query[1]);
      const asked = JSON.parse(body) as { startDate: string; endDate: string; dimensions: string[]; startRow?: number; rowLimit?: number };
      const call: AnalyticsCall = { property, day: asked.startDate, dimension: asked.dimensions[1], startRow: asked.startRow ?? 0, rowLimit: asked.rowLimit ?? 1000, status: 200 };
      calls.push(call);
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
      if (quota.left > 0) {
        quota.left--;
        call.status = quota.status;
        const error = { code: quota.status, message: 'Quota exceeded', status: 'RESOURCE_EXHAUSTED', errors: [{ reason: 'rateLimitExceeded', message: 'Quota exceeded' }] };
        return json(quota.status, { error }, quota.retryAfter ? { 'Retry-After': String(quota.retryAfter) } : {});
      }
      if (successesLeft <= 0) {
        call.status = 500;
        return json(500, { error: { code: 500, message: 'Internal error', status: 'INTERNAL' } });
      }
      successesLeft--;
      const data = properties[property];
      if (!data) return json(403, { error: { code: 403, message: 'User does not have sufficient permission', status: 'PERMISSION_DENIED', errors: [{ reason: 'forbidden' }] } });
      if (asked.startDate !== asked.endDate || asked.dimensions[0] !== 'date') return json(400, { error: { code: 400, message: 'the double answers one day by date' } });
      const rows = data[asked.startDate]?.[asked.dimensions[1] as Dimension] ?? [];
      const page = rows.slice(call.startRow, call.startRow + call.rowLimit);
      return json(200, {
        rows: page.map((row) => ({ keys: [asked.startDate, row.key], clicks: row.clicks, impressions: row.impressions, ctr: row.impressions ? row.clicks / row.impressions : 0, position: row.position })),
        responseAggregationType: 'byProperty',
      });
    }
    return json(404, { error: { code: 404, message: 'Not found' } });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    ...double,
    get refreshToken() {
      return double.refreshToken;
    },
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The settings that point the search-console plugin at a double (and let it reach loopback). */
export function searchConsoleEnv(google: Pick<GoogleDouble, 'url' | 'clientId' | 'clientSecret'>): Record<string, string> {
  return {
    PLUMB_PLUGINS: 'search-console',
    PLUMB_SEARCH_CONSOLE_CLIENT_ID: google.clientId,
    PLUMB_SEARCH_CONSOLE_CLIENT_SECRET: google.clientSecret,
    PLUMB_SEARCH_CONSOLE_AUTHORIZE_URL: `${google.url}/o/oauth2/v2/auth`,
    PLUMB_SEARCH_CONSOLE_TOKEN_URL: `${google.url}/token`,
    PLUMB_SEARCH_CONSOLE_API_URL: `${google.url}/webmasters/v3`,
    PLUMB_SEARCH_CONSOLE_ALLOW_PRIVATE_ENDPOINTS: 'true',
  };
}
