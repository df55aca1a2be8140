// Cross-origin request protection for unsafe methods (CSRF).
// Fetch Metadata first; without it, Origin against the request's host; no browser headers at all
// means a non-browser client, which proceeds to normal authentication.
import type { IncomingHttpHeaders } from 'node:http';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export type CrossOriginVerdict = { allowed: true } | { allowed: false; reason: string };

export function judgeCrossOrigin(method: string, headers: IncomingHttpHeaders, publicUrl: string): CrossOriginVerdict {
  if (SAFE_METHODS.has(method.toUpperCase())) return { allowed: true };
  const fetchSite = headerValue(headers['sec-fetch-site'])?.toLowerCase();
  if (fetchSite) {
    // 'none' is a user-initiated navigation (typed URL, bookmark): no third party involved.
    if (fetchSite === 'same-origin' || fetchSite === 'none') return { allowed: true };
    return { allowed: false, reason: `Sec-Fetch-Site is ${fetchSite}` };
  }
  const origin = headerValue(headers.origin);
  if (origin === undefined) return { allowed: true };
  if (origin === 'null') return { allowed: false, reason: 'Origin is opaque (null)' };
  let originUrl: URL;
  try {
    originUrl = new URL(origin);
  } catch {
    return { allowed: false, reason: 'Origin is not a URL' };
  }
  const host = headerValue(headers.host)?.toLowerCase();
  if (host !== undefined && originUrl.host.toLowerCase() === host) return { allowed: true };
  // Behind a reverse proxy the Host header may be rewritten; the configured public origin is ours too.
  if (originUrl.origin === new URL(publicUrl).origin) return { allowed: true };
  return { allowed: false, reason: `Origin ${originUrl.origin} does not match the host` };
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
