// Read-only share links of a site: created and revoked by its owners and admins, each a random
// token (shown once, stored as SHA-256) with an optional expiry and password. A token resolves to
// its live site only while the link is neither revoked nor expired and the site still exists.
// A link may list the other sites allowed to frame its page (lib/share/embedding.ts).
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { type AuditSite, auditedSite, writeAudit } from '../audit/audit.ts';
import { hashPassword, passwordProblem } from '../auth/passwords.ts';
import type { UserPrincipal } from '../auth/sessions.ts';
import { type FieldError, notFound, validationFailed } from '../errors.ts';
import { checkExpiry } from '../validation.ts';
import type { MetadataQueryable, MetadataStore } from '../stores/metadata/index.ts';
import { pageOf, type Page } from '../pagination.ts';
import { normaliseEmbedOrigins } from './embedding.ts';

export interface ShareView {
  id: string;
  name: string | null;
  expires_at: string | null;
  has_password: boolean;
  /** Origins allowed to frame the link's page; empty: no site may. */
  embed_origins: string[];
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
  embed_origins?: string[];
}

export interface ShareChanges {
  name?: string | null;
  embed_origins?: string[];
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
  embed_origins: string[];
  created_at: Date | string;
}

const VIEW_COLUMNS = 'id, name, expires_at, password_hash, embed_origins, created_at';
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
  embed_origins: row.embed_origins,
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
  const embedOrigins = normaliseEmbedOrigins(input.embed_origins ?? [], problems);
  if (problems.length > 0) throw validationFailed(problems);
  const passwordHash = password === null ? null : await hashPassword(password);
  const token = randomBytes(TOKEN_BYTES).toString('base64url');
  const id = randomUUID();
  const row = await store.transaction(async (tx) => {
    const { teamId, ...site } = await auditedSite(tx, siteId);
    const { rows } = await tx.query<ShareRow>(
      `INSERT INTO share_links (id, site_id, name, token_hash, password_hash, expires_at, created_by, embed_origins)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       RETURNING ${VIEW_COLUMNS}`,
      [id, siteId, name, sha256(token), passwordHash, expiresAt, actor.id, embedOrigins],
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
    `SELECT ${VIEW_COLUMNS} FROM share_links
      WHERE site_id = $1 AND revoked_at IS NULL
      ORDER BY created_at DESC, id LIMIT $2 OFFSET $3`,
    [siteId, page.limit, page.offset],
  );
  const total = counted.rows[0].n;
  const items = rows.map(toView);
  return pageOf(items, total, page);
}

/** Renames a link of this site or changes who may frame it; 404 for a link of another site or a revoked one. */
export async function updateShareLink(store: MetadataStore, actor: UserPrincipal, siteId: string, shareId: string, changes: ShareChanges): Promise<ShareView> {
  const problems: FieldError[] = [];
  const embedOrigins = changes.embed_origins === undefined ? undefined : normaliseEmbedOrigins(changes.embed_origins, problems);
  if (problems.length > 0) throw validationFailed(problems);
  const name = changes.name === undefined ? undefined : changes.name?.trim() || null;
  return store.transaction(async (tx) => {
    const { teamId, ...site } = await auditedSite(tx, siteId);
    const { rows } = await tx.query<ShareRow>(
      `UPDATE share_links
          SET name = CASE WHEN $3 THEN $4 ELSE name END,
              embed_origins = COALESCE($5::text[], embed_origins)
        WHERE id = $1 AND site_id = $2 AND revoked_at IS NULL
        RETURNING ${VIEW_COLUMNS}`,
      [shareId, siteId, name !== undefined, name ?? null, embedOrigins ?? null],
    );
    const row = rows[0];
    if (!row) throw notFound('Share link not found');
    const framing = row.embed_origins.length > 0 ? `may be embedded by ${row.embed_origins.join(', ')}` : 'may not be embedded';
    await writeAudit(tx, { teamId, action: 'site.share.updated', actor, ...audited(row, site), details: `${audited(row, site).details} changed; it ${framing}` });
    return toView(row);
  });
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
