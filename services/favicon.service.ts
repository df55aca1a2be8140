// GET /api/favicon/{domain}: the dashboard's site icons, fetched by the server from one fixed
// favicon host and relayed with a 24-hour cache header, so browsers never ask a third party; and
// GET /api/favicon/source/{name}, the icon of a named traffic source (Google, Hacker News).
// Public (img tags send no token), but an anonymous caller gets icons only of registered sites
// and named sources: any other domain answers the placeholder without a fetch or a cache entry.
// On any upstream trouble the placeholder icon, never a 5xx.
import { join } from 'node:path';
import type { Context, ServiceSchema } from 'moleculer';
import { validationFailed } from '../lib/errors.ts';
import { normaliseFaviconDomain } from '../lib/favicon/domain.ts';
import { sourceHomeHost } from '../lib/ingest/enrich/referrer.ts';
import { createFaviconProxy, FAVICON_MAX_AGE_SECONDS, type Icon } from '../lib/favicon/proxy.ts';
import { placeholderIcon } from '../lib/favicon/cache.ts';
import { isRegisteredDomain } from '../lib/favicon/registered.ts';
import { action } from '../lib/openapi/action.ts';
import { binary } from '../lib/openapi/responses.ts';
import type { Runtime } from '../lib/runtime.ts';
import type { RequestMeta } from '../types/meta.ts';

/** Test hooks: a short upstream timeout keeps the "slow upstream" case fast. */
export interface FaviconServiceOptions {
  timeoutMs?: number;
  maxBytes?: number;
  maxDiskEntries?: number;
  maxDiskBytes?: number;
}

type Meta = RequestMeta & { $responseType?: string };
type Ctx = Context<{ domain: string }, Meta>;

const PRUNE_EVERY_MS = 6 * 60 * 60 * 1000;

/** Headers of every icon answer, 304 included (a revalidation refreshes the cache lifetime). */
function iconHeaders(icon: Icon): Record<string, string> {
  const headers: Record<string, string> = {
    'Cache-Control': `public, max-age=${FAVICON_MAX_AGE_SECONDS}`,
    ETag: icon.etag,
    'X-Content-Type-Options': 'nosniff',
  };
  // SVG can carry script; should someone open it directly, nothing in it may run or load.
  if (icon.contentType === 'image/svg+xml') headers['Content-Security-Policy'] = "default-src 'none'; style-src 'unsafe-inline'";
  return headers;
}

/** If-None-Match: '*' or a list of (possibly weak) validators; weak comparison, as for GET. */
function matchesEtag(header: string | string[] | undefined, etag: string): boolean {
  const value = Array.isArray(header) ? header.join(',') : header;
  if (!value) return false;
  return value.split(',').some((tag) => {
    const candidate = tag.trim().replace(/^W\//, '');
    return candidate === '*' || candidate === etag;
  });
}

export default function createFaviconService(runtime: Runtime, options: FaviconServiceOptions = {}): ServiceSchema {
  const { config, log } = runtime;
  const proxy = createFaviconProxy({
    upstream: config.faviconUpstream,
    allowPrivateUpstream: config.faviconAllowPrivateUpstream,
    cacheDir: join(config.dataDir, 'favicons'),
    log,
    timeoutMs: options.timeoutMs,
    maxBytes: options.maxBytes,
    maxDiskEntries: options.maxDiskEntries,
    maxDiskBytes: options.maxDiskBytes,
  });
  let pruner: NodeJS.Timeout | undefined;
  const prune = () => proxy.prune().catch((err: unknown) => log.warn({ err }, 'favicon: pruning the disk cache failed'));

  const iconOf = async (domain: string): Promise<Icon> => {
    try {
      return await proxy.icon(domain);
    } catch (err) {
      // The proxy turns upstream failures into placeholders itself; this is a bug, still no 5xx.
      log.warn({ err, domain }, 'favicon: unexpected failure');
      return placeholderIcon(Date.now());
    }
  };
  /** A signed-in person or API client may ask for any domain's icon; anyone else for registered sites'. */
  const mayFetch = async (meta: Meta, domain: string) => meta.user !== undefined || meta.apiClient !== undefined || (await isRegisteredDomain(runtime.metadata(), domain));
  const guardedIconOf = async (meta: Meta, domain: string) => ((await mayFetch(meta, domain)) ? iconOf(domain) : placeholderIcon(Date.now()));

  /** The icon with its cache headers, or 304 when the browser holds it already. */
  const answer = (meta: Meta, icon: Icon) => {
    meta.$responseHeaders = iconHeaders(icon);
    if (matchesEtag(meta.request?.headers['if-none-match'], icon.etag)) {
      meta.$statusCode = 304;
      return null;
    }
    meta.$responseType = icon.contentType;
    return icon.body;
  };

  return {
    name: 'favicon',
    settings: { rest: '/' },
    actions: {
      get: action({
        rest: 'GET /api/favicon/:domain',
        auth: 'none',
        params: { domain: 'string|min:1|max:2048' },
        openapi: {
          summary: 'A site’s favicon, fetched by the server from the configured favicon host (placeholder icon when it has none)',
          description:
            'Cached for 24 hours; answers 304 to a matching If-None-Match. 400 when the domain is not a plain public DNS name. Without a session or API token, only domains of registered sites are fetched; any other answers the placeholder.',
          tags: ['favicon'],
          response: binary('image/*'),
          errors: [304],
        },
        async handler(ctx: Ctx) {
          const domain = normaliseFaviconDomain(ctx.params.domain);
          if (!domain) {
            throw validationFailed([{ field: 'domain', message: 'domain must be a DNS name with at least two labels: no IP address, port, user or path, at most 253 characters', type: 'faviconDomain' }]);
          }
          return answer(ctx.meta, await guardedIconOf(ctx.meta, domain));
        },
      }),

      source: action({
        rest: 'GET /api/favicon/source/:name',
        auth: 'none',
        params: { name: 'string|min:1|max:256' },
        openapi: {
          summary: 'The icon of a traffic source as the dashboard names it (Google, Hacker News, or a referring hostname)',
          description: 'The favicon of the source’s home host (Google → google.com); the placeholder icon for a name Plumb does not know (a utm_source). Cached and revalidated as the site favicons.',
          tags: ['favicon'],
          response: binary('image/*'),
          errors: [304],
        },
        async handler(ctx: Context<{ name: string }, Meta>) {
          // A source Plumb names maps to a fixed host; a referring hostname is any domain at all.
          const known = sourceHomeHost(ctx.params.name);
          if (known) return answer(ctx.meta, await iconOf(known));
          const domain = normaliseFaviconDomain(ctx.params.name);
          return answer(ctx.meta, domain ? await guardedIconOf(ctx.meta, domain) : placeholderIcon(Date.now()));
        },
      }),
    },

    started() {
      // Expired entries would be fetched again anyway; removing them keeps the folder small.
      void prune();
      pruner = setInterval(prune, PRUNE_EVERY_MS);
      pruner.unref();
    },

    stopped() {
      clearInterval(pruner);
    },
  };
}
