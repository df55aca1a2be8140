// Provider identities linked to accounts: finding the account of a returning identity, linking
// (by the signed-in person, or on a verified address the provider vouches for), unlinking under
// the rule that the last usable primary sign-in method stays, and the list the security settings
// show. A directory identity on an address it cannot prove waits for a mailed confirmation.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { conflict, notFound } from '../../errors.ts';
import { enqueueMail } from '../../mail/outbox.ts';
import type { MetadataQueryable, MetadataStore } from '../../stores/metadata/index.ts';
import { writeInstanceAudit } from '../../users/admin.ts';
import type { ProviderId } from './providers.ts';
import { refused } from './social.ts';

export interface IdentityView {
  provider: string;
  email: string;
  created_at: string;
  last_used_at: string | null;
}

/** Hours a mailed confirmation of a directory identity stays valid. */
export const CONFIRMATION_HOURS = 24;

const VIEW = `provider, email,
  to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at,
  to_char(last_used_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS last_used_at`;

export async function listIdentities(db: MetadataQueryable, userId: string): Promise<IdentityView[]> {
  const { rows } = await db.query<IdentityView>(`SELECT ${VIEW} FROM user_identities WHERE user_id = $1 ORDER BY created_at, provider`, [userId]);
  return rows;
}

/**
 * How many usable primary ways to sign in an account has: its password, its passkeys, and its
 * linked identities at providers that are enabled now. Locks the account row (call inside the
 * transaction that removes one).
 */
export async function usableSignInMethods(tx: MetadataQueryable, userId: string, enabled: readonly string[]): Promise<number> {
  const { rows } = await tx.query<{ has_password: boolean }>('SELECT password_hash IS NOT NULL AS has_password FROM users WHERE id = $1 FOR UPDATE', [userId]);
  if (!rows[0]) throw notFound('Account not found');
  const { rows: counts } = await tx.query<{ passkeys: number; identities: number }>(
    `SELECT (SELECT count(*)::int FROM passkeys WHERE user_id = $1) AS passkeys,
            (SELECT count(*)::int FROM user_identities WHERE user_id = $1 AND provider = ANY($2::text[])) AS identities`,
    [userId, [...enabled]],
  );
  return (rows[0].has_password ? 1 : 0) + counts[0].passkeys + counts[0].identities;
}

/** The account a returning identity belongs to (and notes its use), or null for a new identity. */
export async function accountOfIdentity(db: MetadataQueryable, provider: ProviderId, subject: string): Promise<string | null> {
  const { rows } = await db.query<{ user_id: string }>(
    'UPDATE user_identities SET last_used_at = now() WHERE provider = $1 AND subject = $2 RETURNING user_id',
    [provider, subject],
  );
  return rows[0]?.user_id ?? null;
}

/** Links an identity to an account; refused when it belongs to another account or the account already has one at this provider. */
export async function linkIdentity(db: MetadataQueryable, userId: string, provider: ProviderId, subject: string, email: string): Promise<'linked' | 'already'> {
  const { rows } = await db.query<{ user_id: string }>('SELECT user_id FROM user_identities WHERE provider = $1 AND subject = $2', [provider, subject]);
  if (rows[0]?.user_id === userId) return 'already';
  if (rows[0]) throw refused('identity_in_use', 'This account at the provider is already linked to another Plumb account');
  try {
    await db.query('INSERT INTO user_identities (id, user_id, provider, subject, email) VALUES ($1, $2, $3, $4, $5)', [randomUUID(), userId, provider, subject, email]);
  } catch (err) {
    if ((err as { code?: string }).code === '23505') throw refused('provider_already_linked', 'Another account at this provider is already linked; unlink it first');
    throw err;
  }
  return 'linked';
}

/**
 * Links an identity to an account with its audit entry and the security notice to the account's
 * address, in one transaction: the notice is sent exactly when the link exists.
 */
export async function linkWithNotice(
  store: MetadataStore,
  user: { id: string; email: string },
  provider: { id: ProviderId; name: string },
  identity: { subject: string; email: string },
  how: string,
): Promise<'linked' | 'already'> {
  return store.transaction(async (tx) => {
    const linked = await linkIdentity(tx, user.id, provider.id, identity.subject, identity.email);
    if (linked === 'linked') {
      await writeInstanceAudit(tx, { action: 'user.provider_linked', actor: user, target: user, details: `${provider.name} (${identity.email}) ${how}` });
      await enqueueMail(tx, { to: user.email, template: 'sign_in_method_linked', params: { provider_name: provider.name, provider_email: identity.email, linked_at: new Date().toISOString() } });
    }
    return linked;
  });
}

/** Removes a linked provider; 404 when none is linked, 409 when it is the last usable way to sign in. */
export async function unlinkIdentity(store: MetadataStore, userId: string, provider: string, enabled: readonly string[]): Promise<void> {
  await store.transaction(async (tx) => {
    const methods = await usableSignInMethods(tx, userId, enabled);
    const { rows } = await tx.query<{ id: string }>('SELECT id FROM user_identities WHERE user_id = $1 AND provider = $2', [userId, provider]);
    if (!rows[0]) throw notFound('No account at this provider is linked');
    // A link to a provider that is switched off is not counted as a way in, so removing it never strands anyone.
    if (enabled.includes(provider) && methods <= 1) {
      throw conflict('This is your only way to sign in: set a password, add a passkey or link another provider first');
    }
    await tx.query('DELETE FROM user_identities WHERE id = $1', [rows[0].id]);
  });
}

const hashToken = (token: string) => createHash('sha256').update(token).digest();

/** Asks the account's owner, by mail to the account's address, to confirm a directory identity. */
export async function mailConfirmation(store: MetadataStore, user: { id: string; email: string }, provider: { id: ProviderId; name: string }, identity: { subject: string; email: string }): Promise<void> {
  await store.transaction(async (tx) => {
    const token = await requestConfirmation(tx, user.id, provider.id, identity.subject, identity.email);
    const expiresAt = new Date(Date.now() + CONFIRMATION_HOURS * 3_600_000).toISOString();
    await enqueueMail(tx, { to: user.email, template: 'sign_in_confirm', params: { provider_name: provider.name, provider_email: identity.email, token, expires_at: expiresAt } });
  });
}

/** A pending directory identity for the account with its address; the token goes into the confirmation mail. */
export async function requestConfirmation(db: MetadataQueryable, userId: string, provider: ProviderId, subject: string, email: string): Promise<string> {
  const token = randomBytes(32).toString('base64url');
  // One pending confirmation per account and provider: a newer request replaces the older.
  await db.query('DELETE FROM identity_confirmations WHERE (user_id = $1 AND provider = $2) OR expires_at < now()', [userId, provider]);
  await db.query(
    `INSERT INTO identity_confirmations (id, user_id, provider, subject, email, token_hash, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, now() + make_interval(hours => $7))`,
    [randomUUID(), userId, provider, subject, email, hashToken(token), CONFIRMATION_HOURS],
  );
  return token;
}

/** Links the identity a confirmation mail was about; the token is used up. Null for an unknown, used or expired token. */
export async function confirmIdentity(store: MetadataStore, token: string): Promise<{ userId: string; provider: ProviderId; email: string } | null> {
  return store.transaction(async (tx) => {
    const { rows } = await tx.query<{ user_id: string; provider: ProviderId; subject: string; email: string }>(
      'DELETE FROM identity_confirmations WHERE token_hash = $1 AND expires_at > now() RETURNING user_id, provider, subject, email',
      [hashToken(token)],
    );
    const pending = rows[0];
    if (!pending) return null;
    await linkIdentity(tx, pending.user_id, pending.provider, pending.subject, pending.email);
    return { userId: pending.user_id, provider: pending.provider, email: pending.email };
  });
}
