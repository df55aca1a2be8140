// A signed-in person's own account: changing the password, and issuing API tokens that never
// exceed the rights the person holds themselves.
import { enqueueMail } from '../mail/outbox.ts';
import { type ApiClientView, createApiClient, deleteApiClient, findApiClient, rotateApiClient } from '../auth/api-clients.ts';
import { siteRoleOf } from '../auth/access.ts';
import { API_SCOPES, type ApiScope, SITE_RANK, type SiteRole } from '../auth/roles.ts';
import { hashPassword, passwordProblem, verifyPassword } from '../auth/passwords.ts';
import type { UserPrincipal } from '../auth/sessions.ts';
import { type FieldError, forbidden, notFound, validationFailed } from '../errors.ts';
import { checkExpiry } from '../validation.ts';
import type { MetadataStore } from '../stores/metadata/index.ts';
import { writeInstanceAudit } from './admin.ts';
import { findUserById } from './users.ts';

/**
 * Sets a new password after checking the current one. A wrong current password is 403, not 401:
 * the caller is signed in, and 401 would tell the dashboard their session ended.
 */
export async function changePassword(db: MetadataStore, user: UserPrincipal, input: { current_password: string; new_password: string }): Promise<void> {
  const problem = passwordProblem(input.new_password, 'new_password');
  if (problem) throw validationFailed([{ field: 'new_password', message: problem, type: 'password' }]);
  const record = await findUserById(db, user.id);
  if (!record) throw notFound('User not found');
  // With no password set (passkey-only account) verifyPassword still spends the time and says no.
  if (!(await verifyPassword(input.current_password, record.password_hash))) throw forbidden('The current password is not correct');
  const hash = await hashPassword(input.new_password);
  await db.transaction(async (tx) => {
    await tx.query('UPDATE users SET password_hash = $2, updated_at = now() WHERE id = $1', [user.id, hash]);
    await writeInstanceAudit(tx, { action: 'user.password_changed', actor: user, target: user });
    await enqueueMail(tx, { to: record.email, template: 'password_changed', params: { changed_at: new Date().toISOString() } });
  });
}

export interface ApiClientRequest {
  name: string;
  scopes: string[];
  sites: { site_id: string; role: SiteRole }[];
  expires_at?: string;
}

/**
 * Issues a token for the caller: known scopes only, each site at most at the caller's own role
 * there (403 otherwise, also for a site they cannot see, so ids cannot be probed), expiry in the
 * future. The token is returned once; only its SHA-256 is kept.
 */
export async function issueApiClient(
  db: MetadataStore,
  owner: UserPrincipal,
  input: ApiClientRequest,
  knownScopes: readonly string[] = API_SCOPES,
): Promise<{ id: string; token: string }> {
  const problems: FieldError[] = [];
  if (input.scopes.some((s) => !knownScopes.includes(s))) problems.push({ field: 'scopes', message: `scopes items must be one of: ${knownScopes.join(', ')}`, type: 'arrayEnum' });
  const siteIds = input.sites.map((s) => s.site_id);
  if (new Set(siteIds).size !== siteIds.length) problems.push({ field: 'sites', message: 'sites must list each site once', type: 'arrayUnique' });
  const expiresAt = input.expires_at === undefined ? undefined : checkExpiry('expires_at', input.expires_at, problems);
  if (problems.length > 0) throw validationFailed(problems);
  return db.transaction(async (tx) => {
    for (const site of input.sites) {
      const own = await siteRoleOf(tx, owner, site.site_id);
      if (!own || SITE_RANK[own] < SITE_RANK[site.role]) throw forbidden(`A token cannot hold the ${site.role} role on site ${site.site_id}: that is more than your own`);
    }
    const client = await createApiClient(tx, {
      name: input.name,
      scopes: [...new Set(input.scopes)] as ApiScope[],
      sites: input.sites.map((s) => ({ siteId: s.site_id, role: s.role })),
      ownerUserId: owner.id,
      expiresAt,
    });
    await writeInstanceAudit(tx, { action: 'api_client.created', actor: owner, target: owner, details: `${client.id} ${input.name}` });
    return client;
  });
}

/** The caller's client, or 404 (someone else's client looks the same as none). */
export async function ownApiClient(db: MetadataStore, owner: UserPrincipal, id: string): Promise<ApiClientView> {
  const view = await findApiClient(db, owner.id, id);
  if (!view) throw notFound('API client not found');
  return view;
}

/** A new token for the caller's client; the old token no longer matches any row. */
export async function rotateOwnApiClient(db: MetadataStore, owner: UserPrincipal, id: string): Promise<string> {
  return db.transaction(async (tx) => {
    const token = await rotateApiClient(tx, owner.id, id);
    if (!token) throw notFound('API client not found');
    await writeInstanceAudit(tx, { action: 'api_client.rotated', actor: owner, target: owner, details: id });
    return token;
  });
}

export async function deleteOwnApiClient(db: MetadataStore, owner: UserPrincipal, id: string): Promise<void> {
  await db.transaction(async (tx) => {
    if (!(await deleteApiClient(tx, owner.id, id))) throw notFound('API client not found');
    await writeInstanceAudit(tx, { action: 'api_client.deleted', actor: owner, target: owner, details: id });
  });
}
