// Which other sites may frame a share link's page: the origins its owner listed on the link (none
// by default). They become the page's `frame-ancestors`; every other dashboard page is framed by none.
import { createHash } from 'node:crypto';
import type { FieldError } from '../errors.ts';
import type { MetadataQueryable } from '../stores/metadata/index.ts';
import { parseHttpUrl } from '../net/http-url.ts';

export const MAX_EMBED_ORIGINS = 20;
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/**
 * The listed origins in their canonical form (`https://host[:port]`, lower case, default port
 * dropped), without duplicates; each that is not a plain http(s) origin is reported in `problems`.
 * An origin is all a browser compares for `frame-ancestors`, so a path or query is refused rather
 * than quietly dropped.
 */
export function normaliseEmbedOrigins(input: readonly string[], problems: FieldError[]): string[] {
  const field = 'embed_origins';
  if (input.length > MAX_EMBED_ORIGINS) {
    problems.push({ field, message: `at most ${MAX_EMBED_ORIGINS} origins may embed a share link`, type: 'arrayMax' });
    return [];
  }
  const origins: string[] = [];
  for (const raw of input) {
    const origin = canonicalOrigin(raw.trim());
    if (origin === null) {
      problems.push({ field, message: `"${raw}" is not an origin like https://blog.example.com (scheme and host, optionally a port; no path)`, type: 'origin' });
    } else if (!origins.includes(origin)) {
      origins.push(origin);
    }
  }
  return origins;
}

function canonicalOrigin(text: string): string | null {
  const url = parseHttpUrl(text);
  if (!url) return null;
  if (url.username || url.password || url.search || url.hash || url.pathname !== '/') return null;
  // The CSP source grammar has no room for these; a host that needs them is no site to allow.
  if (!/^[a-z0-9.-]+$|^\[[0-9a-f:.]+\]$/.test(url.hostname)) return null;
  return url.origin;
}

/** The origins that may frame the page of a live share link; none for an unknown, revoked or expired one. */
export async function shareEmbedders(db: MetadataQueryable, token: string): Promise<string[]> {
  if (!TOKEN_SHAPE.test(token)) return [];
  const { rows } = await db.query<{ embed_origins: string[] }>(
    `SELECT l.embed_origins FROM share_links l JOIN sites s ON s.id = l.site_id
      WHERE l.token_hash = $1 AND l.revoked_at IS NULL AND (l.expires_at IS NULL OR l.expires_at > now()) AND s.deleted_at IS NULL`,
    [createHash('sha256').update(token).digest()],
  );
  return rows[0]?.embed_origins ?? [];
}
