// Forgotten passwords: a reset link by mail, valid one hour, used once. Asking answers the same
// whether or not the address has an account, and does the same work either way (a token is made
// and hashed, the account looked up in a transaction), so neither the answer nor its timing tells
// who has an account. Setting the new password ends every session of the account and mails a
// notice; it does not sign anyone in (the second factor, if any, still applies at the next login).
import { hashPassword, passwordProblem } from '../auth/passwords.ts';
import { validationFailed } from '../errors.ts';
import { enqueueMail } from '../mail/outbox.ts';
import type { MetadataStore } from '../stores/metadata/index.ts';
import { endSessionsIn, newAccountToken, PASSWORD_RESET_SECONDS, spendAccountToken, storeAccountToken } from './account-tokens.ts';
import { writeInstanceAudit } from './admin.ts';
import { normaliseEmail } from './users.ts';

/** Queues a reset mail when the address has an account; answers nothing either way. */
export async function requestPasswordReset(db: MetadataStore, email: string): Promise<void> {
  const { token, hash } = newAccountToken();
  await db.transaction(async (tx) => {
    const { rows } = await tx.query<{ id: string; email: string }>('SELECT id, email FROM users WHERE email = $1 FOR UPDATE', [normaliseEmail(email)]);
    const user = rows[0];
    if (!user) return;
    const expiresAt = await storeAccountToken(tx, { userId: user.id, purpose: 'password_reset', hash, ttlSeconds: PASSWORD_RESET_SECONDS });
    await enqueueMail(tx, { to: user.email, template: 'password_reset', params: { token, expires_at: expiresAt } });
  });
}

const badToken = () => validationFailed([{ field: 'token', message: 'token is invalid, used or expired; ask for a new link', type: 'token' }]);

/** Sets the password of the token's account, burns the token, ends every session, queues the notice. Answers the user id. */
export async function resetPassword(db: MetadataStore, token: string, password: string): Promise<string> {
  const problem = passwordProblem(password);
  if (problem) throw validationFailed([{ field: 'password', message: problem, type: 'password' }]);
  const hash = await hashPassword(password);
  return db.transaction(async (tx) => {
    const spent = await spendAccountToken(tx, 'password_reset', token);
    if (!spent) throw badToken();
    const { rows } = await tx.query<{ id: string; email: string }>('UPDATE users SET password_hash = $2, updated_at = now() WHERE id = $1 RETURNING id, email', [spent.user_id, hash]);
    if (!rows[0]) throw badToken();
    await endSessionsIn(tx, spent.user_id);
    await writeInstanceAudit(tx, { action: 'user.password_reset', actor: rows[0], target: rows[0], details: 'by a link sent by mail' });
    await enqueueMail(tx, { to: rows[0].email, template: 'password_changed', params: { changed_at: new Date().toISOString() } });
    return spent.user_id;
  });
}
