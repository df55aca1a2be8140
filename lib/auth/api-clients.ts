// API-client bearer tokens: issued once, stored as SHA-256, scoped, limited to listed sites with a
// role each, optionally expiring. Verification is cached for a few seconds because it sits on the
// server-ingest path; the cached principal is already capped by the owner's current site roles.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { forbidden, unauthorized } from '../errors.ts';
import type { MetadataQueryable } from '../stores/metadata/index.ts';
import { siteRoleOf } from './access.ts';
import { type ApiScope, SITE_RANK, type SiteRole } from './roles.ts';
import { pageOf } from '../pagination.ts';


/** Plain JSON: it rides in ctx.meta, which crosses nodes serialised. */
export interface ApiClientPrincipal {
  id: string;
  name: string;
  scopes: string[];
  /** site id → role */
  sites: Record<string, SiteRole>;
}

/** What the owner of a client sees of it: never the token, which exists only in the answer that issued it. */
export interface ApiClientView {
  id: string;
  name: string;
  scopes: string[];
  sites: { site_id: string; role: SiteRole }[];
  expires_at: string | null;
  created_at: string;
  last_used_at: string | null;
}

const TOKEN_PREFIX = 'plumb_';

export const hashToken = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();
const newToken = () => `${TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
const iso = (value: unknown): string | null => (value === null || value === undefined ? null : new Date(value as string | Date).toISOString());

export async function createApiClient(
  db: MetadataQueryable,
  input: { name: string; scopes: ApiScope[]; sites: { siteId: string; role: SiteRole }[]; ownerUserId?: string; expiresAt?: Date },
): Promise<{ id: string; token: string }> {
  const id = randomUUID();
  const token = newToken();
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

interface ClientRow {
  id: string;
  name: string;
  scopes: string[];
  expires_at: Date | string | null;
  created_at: Date | string;
  last_used_at: Date | string | null;
  total: number;
}

/** One user's clients (revoked ones are deleted, expired ones stay listed so they can be rotated or removed). */
export async function listApiClients(db: MetadataQueryable, ownerUserId: string, page: { limit: number; offset: number }) {
  const { rows } = await db.query<ClientRow>(
    `SELECT id, name, scopes, expires_at, created_at, last_used_at, count(*) OVER ()::int AS total
       FROM api_clients WHERE owner_user_id = $1
      ORDER BY created_at, id LIMIT $2 OFFSET $3`,
    [ownerUserId, page.limit, page.offset],
  );
  let total = rows[0]?.total;
  if (total === undefined) {
    const counted = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM api_clients WHERE owner_user_id = $1', [ownerUserId]);
    total = counted.rows[0].n;
  }
  const items = await views(db, rows);
  return pageOf(items, total, page);
}

/** The client if it belongs to that user, else null (someone else's client is indistinguishable from none). */
export async function findApiClient(db: MetadataQueryable, ownerUserId: string, id: string): Promise<ApiClientView | null> {
  const { rows } = await db.query<ClientRow>('SELECT id, name, scopes, expires_at, created_at, last_used_at, 0 AS total FROM api_clients WHERE id = $1 AND owner_user_id = $2', [
    id,
    ownerUserId,
  ]);
  return rows[0] ? (await views(db, rows))[0] : null;
}

async function views(db: MetadataQueryable, rows: ClientRow[]): Promise<ApiClientView[]> {
  if (rows.length === 0) return [];
  const { rows: grants } = await db.query<{ api_client_id: string; site_id: string; role: SiteRole }>(
    'SELECT api_client_id, site_id, role FROM api_client_sites WHERE api_client_id = ANY($1::uuid[]) ORDER BY site_id',
    [rows.map((r) => r.id)],
  );
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    scopes: r.scopes,
    sites: grants.filter((g) => g.api_client_id === r.id).map((g) => ({ site_id: g.site_id, role: g.role })),
    expires_at: iso(r.expires_at),
    created_at: iso(r.created_at)!,
    last_used_at: iso(r.last_used_at),
  }));
}

/** A new token for the owner's client; the old one stops matching at once (see the verifier's forget). */
export async function rotateApiClient(db: MetadataQueryable, ownerUserId: string, id: string): Promise<string | null> {
  const token = newToken();
  const { rowCount } = await db.query('UPDATE api_clients SET token_hash = $3 WHERE id = $1 AND owner_user_id = $2', [id, ownerUserId, hashToken(token)]);
  return rowCount === 0 ? null : token;
}

/** Deletes the owner's client and its site grants; false when there was none. */
export async function deleteApiClient(db: MetadataQueryable, ownerUserId: string, id: string): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM api_clients WHERE id = $1 AND owner_user_id = $2', [id, ownerUserId]);
  return rowCount > 0;
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
  /**
   * Drops cached answers for one client, or for every client of one owner, on this node. Other
   * nodes keep theirs until their TTL runs out (5 s by default) unless told too (the users service
   * broadcasts the same request to every node).
   */
  forget(which: { clientId?: string; ownerUserId?: string; all?: boolean }): void;
}

interface VerifiedRow {
  id: string;
  name: string;
  scopes: string[];
  expires_at: Date | string | null;
  owner_user_id: string | null;
  owner_role: 'owner' | 'admin' | 'user' | null;
  site_id: string | null;
  role: SiteRole | null;
}

interface CacheEntry {
  principal: ApiClientPrincipal | null;
  ownerUserId: string | null;
  expires: number;
}

/**
 * The token's principal, with each site role lowered to what the owner holds on that site right now
 * (a demoted or removed owner takes the token down with them within the cache TTL). Clients without
 * an owner (seeded by tests and tools) keep their listed roles. Last use is written at most once a
 * minute per client per node, off the request's path.
 */
export function createApiClientVerifier(
  db: () => MetadataQueryable,
  options: { ttlMs?: number; maxEntries?: number; lastUsedEveryMs?: number } = {},
): ApiClientVerifier {
  const ttl = options.ttlMs ?? 5_000;
  const maxEntries = options.maxEntries ?? 5_000;
  const lastUsedEvery = options.lastUsedEveryMs ?? 60_000;
  const cache = new Map<string, CacheEntry>();
  const lastUsedWritten = new Map<string, number>();

  function recordUse(id: string) {
    const now = Date.now();
    if ((lastUsedWritten.get(id) ?? 0) > now - lastUsedEvery) return;
    if (lastUsedWritten.size >= maxEntries) lastUsedWritten.clear();
    lastUsedWritten.set(id, now);
    // Best effort: a lost write only makes last_used_at older; the next request a minute on retries.
    Promise.resolve()
      .then(() => db().query('UPDATE api_clients SET last_used_at = now() WHERE id = $1', [id]))
      .catch(() => lastUsedWritten.delete(id));
  }

  async function load(hash: Buffer): Promise<CacheEntry> {
    const { rows } = await db().query<VerifiedRow>(
      `SELECT c.id, c.name, c.scopes, c.expires_at, c.owner_user_id, u.role AS owner_role, s.site_id, s.role
         FROM api_clients c
         LEFT JOIN users u ON u.id = c.owner_user_id
         LEFT JOIN api_client_sites s ON s.api_client_id = c.id
        WHERE c.token_hash = $1 AND c.revoked_at IS NULL AND (c.expires_at IS NULL OR c.expires_at > now())`,
      [hash],
    );
    const first = rows[0];
    if (!first || (first.owner_user_id && !first.owner_role)) return { principal: null, ownerUserId: null, expires: Date.now() + ttl };
    const sites: Record<string, SiteRole> = {};
    for (const row of rows) {
      if (!row.site_id || !row.role) continue;
      let role: SiteRole | null = row.role;
      if (first.owner_user_id && first.owner_role) {
        const owners = await siteRoleOf(db(), { id: first.owner_user_id, role: first.owner_role }, row.site_id);
        if (!owners) role = null;
        else if (SITE_RANK[owners] < SITE_RANK[role]) role = owners;
      }
      if (role) sites[row.site_id] = role;
    }
    // An expiring token must not outlive its expiry through the cache.
    const expiresAt = first.expires_at ? new Date(first.expires_at).getTime() : Number.POSITIVE_INFINITY;
    return {
      principal: { id: first.id, name: first.name, scopes: first.scopes, sites },
      ownerUserId: first.owner_user_id,
      expires: Math.min(Date.now() + ttl, expiresAt),
    };
  }

  return {
    async verify(token) {
      if (!token.startsWith(TOKEN_PREFIX) || token.length > 200) return null;
      const hash = hashToken(token);
      const key = hash.toString('base64');
      let entry = cache.get(key);
      if (!entry || entry.expires <= Date.now()) {
        entry = await load(hash);
        if (cache.size >= maxEntries) cache.delete(cache.keys().next().value!);
        cache.set(key, entry);
      }
      if (entry.principal) recordUse(entry.principal.id);
      return entry.principal;
    },

    forget({ clientId, ownerUserId, all }) {
      if (all) return cache.clear();
      for (const [key, entry] of cache) {
        if ((clientId && entry.principal?.id === clientId) || (ownerUserId && entry.ownerUserId === ownerUserId)) cache.delete(key);
      }
    },
  };
}

/** Throws 401 without a client, 403 when the scope or the site (at the given role) is missing. */
export function requireClientAccess(client: ApiClientPrincipal | undefined, scope: ApiScope, siteId: string, minimumRole: SiteRole = 'viewer'): ApiClientPrincipal {
  if (!client) throw unauthorized('An API-client bearer token is required');
  if (!client.scopes.includes(scope)) throw forbidden(`This token lacks the ${scope} scope`);
  const role = Object.hasOwn(client.sites, siteId) ? client.sites[siteId] : undefined;
  if (!role || SITE_RANK[role] < SITE_RANK[minimumRole]) throw forbidden('This token has no access to that site');
  return client;
}
