// The {domain} of GET /api/favicon/{domain}: validated and normalised before it may appear in an
// upstream URL. Only a plain DNS name passes, in its ASCII (punycode) lower-case form: no IP
// literal, port, userinfo, path, query or fragment, at most 253 characters, at least two labels.
import { isIP } from 'node:net';

export const MAX_DOMAIN_LENGTH = 253;
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
// Characters that make the input more than a name (userinfo, port, path, query, fragment, IPv6
// brackets, escapes) or that the URL parser would quietly drop or rewrite (whitespace, controls).
const NOT_A_NAME = /[\s/\\?#@:[\]%\p{Cc}]/u;
/**
 * Special-use names that never have a public host to ask about (RFC 6761, 6762, 7686, and the
 * reverse-lookup and internal trees); .test and .example stay valid: people run sites under them,
 * and the upstream simply has no icon (placeholder).
 */
const PRIVATE_TLDS = new Set(['localhost', 'local', 'invalid', 'onion', 'internal', 'arpa']);

/** The normalised domain, or null when the input is not one a favicon may be fetched for. */
export function normaliseFaviconDomain(input: string): string | null {
  if (typeof input !== 'string' || input.length === 0 || input.length > MAX_DOMAIN_LENGTH * 4) return null;
  if (NOT_A_NAME.test(input)) return null;
  let url: URL;
  try {
    // The URL API does IDNA (Unicode → punycode), lower-casing and dot mapping the way browsers do.
    url = new URL(`http://${input}/`);
  } catch {
    return null;
  }
  if (url.username || url.password || url.port || url.pathname !== '/' || url.search || url.hash) return null;
  // A single trailing dot is the absolute form of the same name.
  const domain = url.hostname.endsWith('.') ? url.hostname.slice(0, -1) : url.hostname;
  // The URL parser turns numeric hosts ("127.1", "0x7f000001") into dotted IPv4: refused here.
  if (domain.length === 0 || domain.length > MAX_DOMAIN_LENGTH || isIP(domain) !== 0) return null;
  const labels = domain.split('.');
  if (labels.length < 2 || !labels.every((label) => LABEL.test(label))) return null;
  const tld = labels[labels.length - 1];
  if (/^\d+$/.test(tld) || PRIVATE_TLDS.has(tld)) return null;
  return domain;
}
