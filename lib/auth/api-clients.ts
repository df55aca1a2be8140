// API-client bearer tokens: issued once, stored as SHA-256, scoped, limited to listed sites with a
// role each. Verification is cached for a few seconds because it sits on the server-ingest path.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { forbidden, unauthorized } from '../errors.ts';
import type { MetadataQueryable } from '../stores/metadata/index.ts';

export const API_SCOPES = ['stats:read', 'ingest:write', 'ai-fetch:write', 'mcp'] as const;
export type ApiScope = (typeof API_SCOPES)[number];
export type SiteRole = 'owner' | 'admin' | 'editor' | 'viewer';

/** Plain JSON: it rides in ctx.meta, which crosses nodes serialised. */
export interface ApiClientPrincipal {
  id: string;
  name: string;
  scopes: string[];
  /** site id → role */
  sites: Record<string, SiteRole>;
}

const TOKEN_PREFIX = 'plumb_';

export const hashToken = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();

export async function createApiClient(
  db: MetadataQueryable,
  input: { name: string; scopes: ApiScope[]; sites: { siteId: string; role: SiteRole }[]; ownerUserId?: string; expiresAt?: Date },
): Promise<{ id: string; token: string }> {
  const id = randomUUID();
  const token = `${TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
  await db.query('INSERT INTO api_clients (id, owner_user_id, name, token_hash, scopes, expires_at) VALUES ($1, $2, $3, $4, $5, $6)', [
    id,
    input.ownerUserId ?? null,
    input.name,
    hashToken(token),
    input.scopes,
    input.expiresAt ?? null,
  ]);
  for (const site of input.sites) {
    await db.query('INSERT INTO api_client_sites (api_client_id, site_id, role) VALUES ($1, $2, $3)', [id, site.siteId, site.role]);
  }
  return { id, token };
}

/** Reads `Authorization: Bearer <token>` or `X-API-Key: <token>`. */
export function bearerToken(headers: Record<string, string | string[] | undefined>): string | undefined {
  const authorization = headers.authorization;
  if (typeof authorization === 'string') {
    const match = /^Bearer\s+(\S+)$/i.exec(authorization.trim());
    if (match) return match[1];
  }
  const apiKey = headers['x-api-key'];
  return typeof apiKey === 'string' && apiKey.trim() !== '' ? apiKey.trim() : undefined;
}

export interface ApiClientVerifier {
  verify(token: string): Promise<ApiClientPrincipal | null>;
}

export function createApiClientVerifier(db: () => MetadataQueryable, options: { ttlMs?: number; maxEntries?: number } = {}): ApiClientVerifier {
  const ttl = options.ttlMs ?? 5_000;
  const maxEntries = options.maxEntries ?? 5_000;
  const cache = new Map<string, { principal: ApiClientPrincipal | null; expires: number }>();
  return {
    async verify(token) {
      if (!token.startsWith(TOKEN_PREFIX) || token.length > 200) return null;
      const hash = hashToken(token);
      const key = hash.toString('base64');
      const hit = cache.get(key);
      if (hit && hit.expires > Date.now()) return hit.principal;
      const { rows } = await db().query<{ id: string; name: string; scopes: string[]; site_id: string | null; role: SiteRole | null }>(
        `SELECT c.id, c.name, c.scopes, s.site_id, s.role
           FROM api_clients c LEFT JOIN api_client_sites s ON s.api_client_id = c.id
          WHERE c.token_hash = $1 AND c.revoked_at IS NULL AND (c.expires_at IS NULL OR c.expires_at > now())`,
        [hash],
      );
      const principal: ApiClientPrincipal | null = rows[0]
        ? {
            id: rows[0].id,
            name: rows[0].name,
            scopes: rows[0].scopes,
            sites: Object.fromEntries(rows.filter((r) => r.site_id).map((r) => [r.site_id!, r.role!])),
          }
        : null;
      if (cache.size >= maxEntries) cache.delete(cache.keys().next().value!);
      cache.set(key, { principal, expires: Date.now() + ttl });
      return principal;
    },
  };
}

const ROLE_RANK: Record<SiteRole, number> = { viewer: 1, editor: 2, admin: 3, owner: 4 };

/** Throws 401 without a client, 403 when the scope or the site (at the given role) is missing. */
export function requireClientAccess(client: ApiClientPrincipal | undefined, scope: ApiScope, siteId: string, minimumRole: SiteRole = 'viewer'): ApiClientPrincipal {
  if (!client) throw unauthorized('An API-client bearer token is required');
  if (!client.scopes.includes(scope)) throw forbidden(`This token lacks the ${scope} scope`);
  const role = Object.hasOwn(client.sites, siteId) ? client.sites[siteId] : undefined;
  if (!role || ROLE_RANK[role] < ROLE_RANK[minimumRole]) throw forbidden('This token has no access to that site');
  return client;
}
