// The one way a hostname becomes a site key: lower-case, IDN to ASCII, trailing dot and "www."
// folded. Used for site domains, extra hostnames and browser Origins alike.
import { parseHttpUrl } from '../net/http-url.ts';

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

export function normaliseHostname(input: string): string | null {
  const raw = input.trim().toLowerCase().replace(/\.$/, '');
  if (raw === '' || raw.length > 253 || /[/:@?#\s\\]/.test(raw)) return null;
  let ascii: string;
  try {
    ascii = new URL(`http://${raw}`).hostname;
  } catch {
    return null;
  }
  const host = ascii.startsWith('www.') ? ascii.slice(4) : ascii;
  const labels = host.split('.');
  if (labels.length < 2 || !labels.every((label) => LABEL.test(label))) return null;
  // Bare IPv4 addresses are not site domains.
  if (labels.every((label) => /^\d+$/.test(label))) return null;
  return host;
}

/** The site key of an Origin/Referer/page URL, or null when it is not an http(s) URL. */
export function hostnameOfUrl(url: string): string | null {
  const parsed = parseHttpUrl(url);
  return parsed ? normaliseHostname(parsed.hostname) : null;
}
