// Changing one's email address: asked with the current password, confirmed by a link sent to the
// new address (24 hours, used once), so nobody moves an account to an address they do not read.
// The old address is told once the change is done. Asking answers the same whether or not the
// new address already belongs to another account (no mail is sent then, and confirming would
// refuse it), so the form reveals nobody's account.
import { verifyPassword } from '../auth/passwords.ts';
import type { UserPrincipal } from '../auth/sessions.ts';
import { conflict, forbidden, notFound, validationFailed } from '../errors.ts';
import { enqueueMail } from '../mail/outbox.ts';
import type { MetadataStore } from '../stores/metadata/index.ts';
import { EMAIL_CHANGE_SECONDS, newAccountToken, spendAccountToken, storeAccountToken } from './account-tokens.ts';
import { userEvent, writeInstanceAudit } from './admin.ts';
import { findUserById, normaliseEmail } from './users.ts';

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Queues the confirmation to the new address (unless another account has it). A wrong password is 403. */
export async function requestEmailChange(db: MetadataStore, user: UserPrincipal, input: { email: string; password: string }): Promise<string> {
  const email = normaliseEmail(input.email);
  if (!EMAIL.test(email) || email.length > 254) throw validationFailed([{ field: 'email', message: 'email must be an email address', type: 'email' }]);
  const record = await findUserById(db, user.id);
  if (!record) throw notFound('User not found');
  // With no password set (passkey-only account) verifyPassword still spends the time and says no.
  if (!(await verifyPassword(input.password, record.password_hash))) throw forbidden('The password is not correct');
  if (email === record.email) throw validationFailed([{ field: 'email', message: 'email is already the address of this account', type: 'email' }]);
  const { token, hash } = newAccountToken();
  await db.transaction(async (tx) => {
    const taken = await tx.query('SELECT 1 FROM users WHERE email = $1', [email]);
    if (taken.rows.length > 0) return;
    const expiresAt = await storeAccountToken(tx, { userId: user.id, purpose: 'email_change', hash, ttlSeconds: EMAIL_CHANGE_SECONDS, newEmail: email });
    await enqueueMail(tx, { to: email, template: 'email_change_confirm', params: { new_email: email, token, expires_at: expiresAt } });
  });
  return email;
}

/** Moves the account to the confirmed address, burns the token and tells the old address. Answers the account. */
export async function confirmEmailChange(db: MetadataStore, token: string): Promise<UserPrincipal> {
  return db.transaction(async (tx) => {
    const spent = await spendAccountToken(tx, 'email_change', token);
    if (!spent?.new_email) throw validationFailed([{ field: 'token', message: 'token is invalid, used or expired; ask for a new link', type: 'token' }]);
    const { rows: before } = await tx.query<UserPrincipal>('SELECT id, email, role FROM users WHERE id = $1 FOR UPDATE', [spent.user_id]);
    if (!before[0]) throw validationFailed([{ field: 'token', message: 'token is invalid, used or expired; ask for a new link', type: 'token' }]);
    let rows: (UserPrincipal & { totp_enabled: boolean; created_at: string })[];
    try {
      ({ rows } = await tx.query<UserPrincipal & { totp_enabled: boolean; created_at: string }>(
        `UPDATE users SET email = $2, updated_at = now() WHERE id = $1
         RETURNING id, email, role, totp_enabled_at IS NOT NULL AS totp_enabled, created_at`,
        [spent.user_id, spent.new_email],
      ));
    } catch (err) {
      if ((err as { code?: string }).code === '23505') throw conflict('Another account has this address now');
      throw err;
    }
    const changed = rows[0];
    await writeInstanceAudit(tx, { action: 'user.email_changed', actor: before[0], target: changed, details: `from ${before[0].email}` });
    await userEvent(tx, 'system.user.updated', { ...changed, created_at: new Date(changed.created_at).toISOString() });
    await enqueueMail(tx, { to: before[0].email, template: 'email_changed', params: { old_email: before[0].email, new_email: changed.email, changed_at: new Date().toISOString() } });
    return { id: changed.id, email: changed.email, role: changed.role };
  });
}
