// Read-only share links of a site: created and revoked by its owners and admins, each a random
// token (shown once, stored as SHA-256) with an optional expiry and password. A token resolves to
// its live site only while the link is neither revoked nor expired and the site still exists.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { type AuditSite, auditedSite, writeAudit } from '../audit/audit.ts';
import { hashPassword, passwordProblem } from '../auth/passwords.ts';
import type { UserPrincipal } from '../auth/sessions.ts';
import { type FieldError, notFound, validationFailed } from '../errors.ts';
import { checkExpiry } from '../validation.ts';
import type { MetadataQueryable, MetadataStore } from '../stores/metadata/index.ts';
import { pageOf, type Page } from '../pagination.ts';

export interface ShareView {
  id: string;
  name: string | null;
  expires_at: string | null;
  has_password: boolean;
  created_at: string;
}

export interface CreatedShare {
  share: ShareView & { url: string };
  /** The secret part of the link; shown this once, only its hash is kept. */
  token: string;
}

export interface ShareInput {
  name?: string | null;
  expires_at?: string | null;
  password?: string | null;
}

/** A live share link behind a token, with what the public view needs. */
export interface ResolvedShare {
  id: string;
  name: string | null;
  passwordHash: string | null;
  site: { id: string; domain: string; timezone: string };
}

interface ShareRow {
  id: string;
  name: string | null;
  expires_at: Date | string | null;
  password_hash: string | null;
  created_at: Date | string;
}

const TOKEN_BYTES = 32;
/** 32 random bytes in base64url: 43 characters of [A-Za-z0-9_-]. */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

const sha256 = (value: string) => createHash('sha256').update(value).digest();
const iso = (value: Date | string) => new Date(value).toISOString();

const toView = (row: ShareRow): ShareView => ({
  id: row.id,
  name: row.name,
  expires_at: row.expires_at === null ? null : iso(row.expires_at),
  has_password: row.password_hash !== null,
  created_at: iso(row.created_at),
});


/** A share link as its audit entry names it: its name (if it has one) and its site's domain, its id beside. */
const audited = (link: { id: string; name: string | null }, site: AuditSite) => ({
  site,
  subject: { type: 'share_link' as const, id: link.id, name: link.name },
  details: `${link.name ? `share link "${link.name}"` : 'unnamed share link'} on ${site.domain}`,
});

export async function createShareLink(store: MetadataStore, actor: UserPrincipal, siteId: string, input: ShareInput, publicUrl: string): Promise<CreatedShare> {
  const name = input.name?.trim() || null;
  const problems: FieldError[] = [];
  // Empty fields mean "none", as a form sends them.
  const expiresAt = input.expires_at ? (checkExpiry('expires_at', input.expires_at, problems) ?? null) : null;
  const password = input.password || null;
  const problem = password === null ? null : passwordProblem(password);
  if (problem) problems.push({ field: 'password', message: problem, type: 'password' });
  if (problems.length > 0) throw validationFailed(problems);
  const passwordHash = password === null ? null : await hashPassword(password);
  const token = randomBytes(TOKEN_BYTES).toString('base64url');
  const id = randomUUID();
  const row = await store.transaction(async (tx) => {
    const { teamId, ...site } = await auditedSite(tx, siteId);
    const { rows } = await tx.query<ShareRow>(
      `INSERT INTO share_links (id, site_id, name, token_hash, password_hash, expires_at, created_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       RETURNING id, name, expires_at, password_hash, created_at`,
      [id, siteId, name, sha256(token), passwordHash, expiresAt, actor.id],
    );
    await writeAudit(tx, { teamId, action: 'site.share.created', actor, ...audited({ id, name }, site) });
    return rows[0];
  });
  return { share: { ...toView(row), url: `${publicUrl}/share/${token}` }, token };
}

/** The site's links that were not revoked (expired ones included: their owners should see them), newest first. */
export async function listShareLinks(db: MetadataQueryable, siteId: string, page: { limit: number; offset: number }): Promise<Page<ShareView>> {
  const counted = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM share_links WHERE site_id = $1 AND revoked_at IS NULL', [siteId]);
  const { rows } = await db.query<ShareRow>(
    `SELECT id, name, expires_at, password_hash, created_at FROM share_links
      WHERE site_id = $1 AND revoked_at IS NULL
      ORDER BY created_at DESC, id LIMIT $2 OFFSET $3`,
    [siteId, page.limit, page.offset],
  );
  const total = counted.rows[0].n;
  const items = rows.map(toView);
  return pageOf(items, total, page);
}

/** Revokes a link of this site; 404 for a link of another site or one already revoked. */
export async function revokeShareLink(store: MetadataStore, actor: UserPrincipal, siteId: string, shareId: string): Promise<void> {
  await store.transaction(async (tx) => {
    const { teamId, ...site } = await auditedSite(tx, siteId);
    const { rows } = await tx.query<{ name: string | null }>(
      'UPDATE share_links SET revoked_at = now() WHERE id = $1 AND site_id = $2 AND revoked_at IS NULL RETURNING name',
      [shareId, siteId],
    );
    if (!rows[0]) throw notFound('Share link not found');
    await writeAudit(tx, { teamId, action: 'site.share.revoked', actor, ...audited({ id: shareId, name: rows[0].name }, site) });
  });
}

/** The live link behind a token; 404 alike for unknown, revoked, expired, and links of deleted sites. */
export async function resolveShareToken(db: MetadataQueryable, token: string): Promise<ResolvedShare> {
  // Anything not shaped like a token cannot match one: no need to ask the database.
  if (!TOKEN_SHAPE.test(token)) throw notFound('Share link not found');
  const { rows } = await db.query<{ id: string; name: string | null; password_hash: string | null; site_id: string; domain: string; timezone: string }>(
    `SELECT l.id, l.name, l.password_hash, s.id AS site_id, s.domain, s.timezone
       FROM share_links l JOIN sites s ON s.id = l.site_id
      WHERE l.token_hash = $1 AND l.revoked_at IS NULL AND (l.expires_at IS NULL OR l.expires_at > now()) AND s.deleted_at IS NULL`,
    [sha256(token)],
  );
  const row = rows[0];
  if (!row) throw notFound('Share link not found');
  return { id: row.id, name: row.name, passwordHash: row.password_hash, site: { id: row.site_id, domain: row.domain, timezone: row.timezone } };
}
