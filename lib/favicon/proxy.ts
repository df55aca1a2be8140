// The favicon proxy (README: Favicons): one upstream request
// per domain and day to the one configured favicon host, relayed only when it is an image; any
// failure becomes the bundled placeholder, never an error. Concurrent requests for a domain share
// one upstream request.
import type { Log } from '../log.ts';
import { guardedRequest, OutboundError } from '../net/guarded-fetch.ts';
import { createFaviconCache, etagOf, type Icon, placeholderIcon } from './cache.ts';

export type { Icon } from './cache.ts';

/** Spec: Limits (favicon upstream timeout 5 s; cache header 24 h). */
export const FAVICON_TIMEOUT_MS = 5_000;
export const FAVICON_MAX_AGE_SECONDS = 86_400;
/** Real favicons are a few KiB; anything much larger is not one. */
export const FAVICON_MAX_BYTES = 100 * 1024;

export interface FaviconProxyOptions {
  /** Base URL of the favicon host; `<domain>.ico` is appended to its path. */
  upstream: string;
  allowPrivateUpstream: boolean;
  /** Where the disk cache lives (<data dir>/favicons). */
  cacheDir: string;
  log: Log;
  timeoutMs?: number;
  maxBytes?: number;
  /** Bounds of the disk cache (entries, bytes); defaults in cache.ts. */
  maxDiskEntries?: number;
  maxDiskBytes?: number;
  resolver?: (host: string) => Promise<string[]>;
}

export interface FaviconProxy {
  /** The icon for an already normalised domain (lib/favicon/domain.ts): relayed, cached or placeholder. */
  icon(domain: string): Promise<Icon>;
  /** Drops expired disk entries. */
  prune(): Promise<number>;
}

/**
 * The upstream URL for a domain, built structurally on the one configured host: the domain only
 * ever becomes the last path segment, whatever it contains.
 */
export function upstreamUrl(upstream: string, domain: string): URL {
  const url = new URL(upstream);
  url.search = '';
  url.hash = '';
  const base = url.pathname.endsWith('/') ? url.pathname : `${url.pathname}/`;
  url.pathname = `${base}${encodeURIComponent(domain)}.ico`;
  return url;
}

const startsWith = (body: Buffer, bytes: number[], at = 0) => bytes.every((byte, i) => body[at + i] === byte);
const ascii = (text: string) => [...text].map((c) => c.charCodeAt(0));

/** The image type the bytes themselves show (ICO, PNG, GIF, JPEG, WebP, SVG), or null. */
export function sniffImageType(body: Buffer): string | null {
  if (startsWith(body, [0x00, 0x00, 0x01, 0x00])) return 'image/x-icon';
  if (startsWith(body, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (startsWith(body, ascii('GIF87a')) || startsWith(body, ascii('GIF89a'))) return 'image/gif';
  if (startsWith(body, [0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (startsWith(body, ascii('RIFF')) && startsWith(body, ascii('WEBP'), 8)) return 'image/webp';
  // SVG is text: an <svg> root after an optional BOM, XML declaration, comments and doctype.
  const head = body.subarray(0, 2048).toString('utf8').replace(/^\uFEFF/, '');
  const prolog = /^\s*(?:<\?xml[^>]*\?>\s*)?(?:(?:<!--[\s\S]*?-->|<!DOCTYPE[^>]*>)\s*)*<svg[\s>]/i;
  return prolog.test(head) ? 'image/svg+xml' : null;
}

/**
 * The type to relay a body as, or null when it is not an image. Sniffed bytes win over the label;
 * an image/* label alone is believed for raster formats we do not sniff (AVIF, BMP …), never for
 * SVG, which is active content and must prove itself.
 */
export function imageTypeOf(body: Buffer, declared: string | undefined): string | null {
  const sniffed = sniffImageType(body);
  if (sniffed) return sniffed;
  const label = (declared ?? '').split(';')[0].trim().toLowerCase();
  return /^image\/[a-z0-9.+-]+$/.test(label) && label !== 'image/svg+xml' ? label : null;
}

export function createFaviconProxy(options: FaviconProxyOptions): FaviconProxy {
  const { log } = options;
  const timeoutMs = options.timeoutMs ?? FAVICON_TIMEOUT_MS;
  const maxBytes = options.maxBytes ?? FAVICON_MAX_BYTES;
  const cache = createFaviconCache({
    dir: options.cacheDir,
    ttlMs: FAVICON_MAX_AGE_SECONDS * 1000,
    log,
    maxDiskEntries: options.maxDiskEntries,
    maxDiskBytes: options.maxDiskBytes,
  });
  const inFlight = new Map<string, Promise<Icon>>();

  /** One upstream request; why it failed is logged at debug level (it is the upstream's business). */
  async function fetchIcon(domain: string): Promise<Icon> {
    const fetchedAt = Date.now();
    const fallback = (why: string) => {
      log.debug({ domain, why }, 'favicon: serving the placeholder');
      return placeholderIcon(fetchedAt);
    };
    try {
      const res = await guardedRequest(upstreamUrl(options.upstream, domain), {
        timeoutMs,
        maxBytes,
        allowPrivate: options.allowPrivateUpstream,
        resolver: options.resolver,
        headers: { Accept: 'image/*', 'User-Agent': 'Plumb-Favicon' },
      });
      // Redirects are not followed (spec), so a 3xx is as much a failure as a 404.
      if (res.status !== 200) return fallback(`upstream answered ${res.status}`);
      if (res.body.length === 0) return fallback('upstream answered an empty body');
      const header = res.headers['content-type'];
      const contentType = imageTypeOf(res.body, Array.isArray(header) ? header[0] : header);
      if (!contentType) return fallback(`not an image (${header ?? 'no content type'})`);
      return { body: res.body, contentType, etag: etagOf(res.body), placeholder: false, fetchedAt };
    } catch (err) {
      return fallback(err instanceof OutboundError ? `${err.kind}: ${err.message}` : String(err));
    }
  }

  async function load(domain: string): Promise<Icon> {
    const cached = await cache.get(domain);
    if (cached) return cached;
    const icon = await fetchIcon(domain);
    await cache.set(domain, icon);
    return icon;
  }

  return {
    icon(domain) {
      let pending = inFlight.get(domain);
      if (!pending) {
        pending = load(domain).finally(() => inFlight.delete(domain));
        inFlight.set(domain, pending);
      }
      return pending;
    },
    prune: () => cache.prune(),
  };
}
