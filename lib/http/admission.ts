// Admission of one request to an action, the same on the gateway's routed path and on its ingest
// hot path: who is asking (client IP, user agent, origin) into meta, the rate limit, cross-origin
// protection (or CORS headers for public cross-origin routes), an API-client token if one is
// presented, then the body read with this action's limit.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ActionSchema } from 'moleculer';
import { bearerToken } from '../auth/api-clients.ts';
import { PlumbError, unauthorized } from '../errors.ts';
import { clientIp } from '../ingest/enrich/client-ip.ts';
import type { Runtime } from '../runtime.ts';
import type { RequestMeta } from '../../types/meta.ts';
import type { RequestInfo } from '../ingest/pipeline.ts';
import { readJsonBody, readRawBody } from './body.ts';
import { judgeCrossOrigin } from './cross-origin.ts';

/**
 * Public cross-origin routes (the tracker ingest) send no credentials, so any origin may read the
 * answer. A browser reads the methods, headers and max age from the preflight's answer alone (the
 * Fetch standard's CORS-preflight response headers); every other answer needs only the origin, and
 * each header more is one more for Node to check on every tracker hit.
 */
const ALLOW_ANY_ORIGIN = { 'Access-Control-Allow-Origin': '*' };
export const CORS_PREFLIGHT_HEADERS = {
  ...ALLOW_ANY_ORIGIN,
  'Access-Control-Allow-Methods': 'POST, OPTIONS',
  'Access-Control-Allow-Headers': 'Content-Type',
  'Access-Control-Max-Age': '86400',
};
/** The CORS headers of every answer of a public cross-origin route (name, value, …). */
export const CORS_HEADER_LIST = Object.entries(ALLOW_ANY_ORIGIN).flat();
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Who is asking: the client address (behind the trusted proxies), user agent, origin and referer. */
export function describeRequest(runtime: Runtime, remoteAddress: string | undefined, headers: RequestInfo['headers']): RequestInfo {
  const header = (name: string) => {
    const value = headers[name];
    return typeof value === 'string' && value !== '' ? value : undefined;
  };
  const ip = clientIp(remoteAddress, headers, runtime.config.trustedProxyHops);
  return { ip, userAgent: header('user-agent') ?? '', origin: header('origin'), referer: header('referer'), headers };
}

/**
 * Takes the client's token of the rate limit a request counts against (its action's, or the API's
 * for any other /api path); throws 429 when there is none. A promise only when the count is in Redis.
 */
export function takeRateToken(runtime: Runtime, action: ActionSchema | undefined, url: string, ip: string): Promise<void> | undefined {
  const bucket = action?.rateLimit ?? (url.startsWith('/api/') ? 'api' : undefined);
  return bucket ? runtime.rateLimits.consume(bucket, ip) : undefined;
}

/**
 * Admits a request to `action` and returns its body (undefined when there is none). With
 * `headers`, response headers are added to that list (name, value, …) for the caller to write at
 * once, instead of set one by one on `res`.
 */
export async function admitRequest(runtime: Runtime, req: IncomingMessage, res: ServerResponse, action: ActionSchema | undefined, meta: RequestMeta, headers?: string[]) {
  const method = (req.method ?? 'GET').toUpperCase();
  // Node's getter looks the object up by a symbol at each read: read once.
  const requestHeaders = req.headers;
  meta.request = describeRequest(runtime, req.socket.remoteAddress, requestHeaders);
  const { ip } = meta.request;
  // Before the rate limit: a browser reads a cross-origin 429 only with them.
  if (action?.crossOrigin) {
    if (headers) headers.push(...CORS_HEADER_LIST);
    else for (const [name, value] of Object.entries(ALLOW_ANY_ORIGIN)) res.setHeader(name, value);
  }
  const limited = takeRateToken(runtime, action, req.url ?? '', ip);
  if (limited) await limited;
  if (!action?.crossOrigin) {
    const verdict = judgeCrossOrigin(method, requestHeaders, runtime.config.publicUrl);
    if (!verdict.allowed) throw new PlumbError(403, 'cross_origin_rejected', `Cross-origin request rejected: ${verdict.reason}`);
  }
  const token = bearerToken(requestHeaders);
  if (token !== undefined) {
    const client = await runtime.apiClients.verify(token);
    if (!client) throw unauthorized('The API token is invalid, expired or revoked');
    meta.apiClient = client;
  } else if (!action?.crossOrigin && requestHeaders.cookie) {
    const signedIn = await runtime.sessions.authenticate(requestHeaders.cookie);
    if (signedIn) {
      meta.user = signedIn.user;
      meta.session = signedIn.session;
      // Renewed from remember-me: the browser gets the new session and the rotated token.
      if (signedIn.setCookies.length > 0) res.setHeader('Set-Cookie', signedIn.setCookies);
    }
  }
  if (!BODY_METHODS.has(method)) return undefined;
  // The bytes reach the action as its `body` parameter (which it declares and checks is a Buffer).
  if (action?.formBody) {
    await readRawBody(req, { limitBytes: action.bodyLimit ?? runtime.config.apiBodyLimitBytes, anyType: true });
    return undefined;
  }
  if (action?.rawBody) return { body: await readRawBody(req, { limitBytes: action.bodyLimit ?? runtime.config.apiBodyLimitBytes }) };
  return readJsonBody(req, { limitBytes: action?.bodyLimit ?? runtime.config.apiBodyLimitBytes, acceptTextPlain: action?.textBody === true });
}
