// The parts of a page URL that analytics keeps: the hostname (www. folded, as sites are keyed), the
// path without query or fragment (queries carry tokens, emails and session ids we must not store)
// and the campaign parameters.
import { parseHttpUrl } from '../../net/http-url.ts';
import { BoundedCache } from './cache.ts';

export interface UtmFields {
  utm_source: string;
  utm_medium: string;
  utm_campaign: string;
  utm_term: string;
  utm_content: string;
}

export interface PageUrl {
  /** Lower-case, IDN in punycode, "www." and a trailing dot removed: the same key a site uses. */
  hostname: string;
  /** Pathname as the URL parser keeps it (percent-escapes stay as sent), at most 1024 chars. */
  path: string;
  utm: UtmFields;
}

const PATH_MAX = 1024;
const UTM_MAX = 256;
const NO_UTM: UtmFields = Object.freeze({ utm_source: '', utm_medium: '', utm_campaign: '', utm_term: '', utm_content: '' });

function param(params: URLSearchParams, name: string): string {
  const value = params.get(name);
  return value === null ? '' : value.trim().slice(0, UTM_MAX);
}

/**
 * Page URLs seen, parsed: a site's visitors load the same pages, and parsing a URL costs more than
 * looking it up. URLs longer than 512 characters (rarely the same twice) are parsed every time.
 */
const pages = new BoundedCache<Readonly<PageUrl> | null>(2000, 512);

/**
 * Hostname, path and UTM fields of an absolute http(s) URL; null for any other scheme or text
 * the URL parser refuses. Like Plausible, `source` and then `ref` stand in for a missing
 * utm_source (links such as ?ref=producthunt). The answer is shared with later calls for the same
 * URL, and frozen.
 */
export function parsePageUrl(url: string): Readonly<PageUrl> | null {
  return pages.getOrMake(url, parseFrozen);
}

function parseFrozen(url: string): Readonly<PageUrl> | null {
  const page = parse(url);
  if (page !== null) Object.freeze(Object.freeze(page).utm);
  return page;
}

function parse(url: string): PageUrl | null {
  const parsed = parseHttpUrl(url);
  if (!parsed) return null;
  let hostname = parsed.hostname;
  if (hostname.endsWith('.')) hostname = hostname.slice(0, -1);
  if (hostname.startsWith('www.')) hostname = hostname.slice(4);
  if (hostname === '') return null;
  const path = parsed.pathname.length > PATH_MAX ? parsed.pathname.slice(0, PATH_MAX) : parsed.pathname;
  if (parsed.search.length <= 1) return { hostname, path, utm: { ...NO_UTM } };
  const params = parsed.searchParams;
  return {
    hostname,
    path,
    utm: {
      utm_source: param(params, 'utm_source') || param(params, 'source') || param(params, 'ref'),
      utm_medium: param(params, 'utm_medium'),
      utm_campaign: param(params, 'utm_campaign'),
      utm_term: param(params, 'utm_term'),
      utm_content: param(params, 'utm_content'),
    },
  };
}
