// Single-use tokens sent by mail to prove control of an address: a password reset (1 hour) and an
// email change confirmation (24 hours). The token is 32 random bytes shown only in the message;
// only its SHA-256 is stored, so a database leak resets no password. Spending one is a single
// conditional UPDATE, so two requests racing with the same token cannot both succeed.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { MetadataQueryable } from '../stores/metadata/index.ts';

export type TokenPurpose = 'password_reset' | 'email_change';

export const PASSWORD_RESET_SECONDS = 3600;
export const EMAIL_CHANGE_SECONDS = 86_400;

const sha256 = (token: string) => createHash('sha256').update(token, 'utf8').digest();

/** A new token and its hash; made for every request alike, whether or not it will be stored. */
export function newAccountToken(): { token: string; hash: Buffer } {
  const token = randomBytes(32).toString('base64url');
  return { token, hash: sha256(token) };
}

/** Stores the token's hash; earlier open tokens of the same purpose for the user stop working. Answers the expiry (RFC 3339). */
export async function storeAccountToken(
  tx: MetadataQueryable,
  input: { userId: string; purpose: TokenPurpose; hash: Buffer; ttlSeconds: number; newEmail?: string },
): Promise<string> {
  await tx.query('UPDATE account_tokens SET used_at = now() WHERE user_id = $1 AND purpose = $2 AND used_at IS NULL', [input.userId, input.purpose]);
  const { rows } = await tx.query<{ expires_at: Date | string }>(
    `INSERT INTO account_tokens (id, user_id, purpose, token_hash, new_email, expires_at)
     VALUES ($1, $2, $3, $4, $5, now() + make_interval(secs => $6)) RETURNING expires_at`,
    [randomUUID(), input.userId, input.purpose, input.hash, input.newEmail ?? null, input.ttlSeconds],
  );
  // Expired tokens can go: they fail the check anyway. Now and then is enough.
  if (Math.random() < 0.05) await tx.query("DELETE FROM account_tokens WHERE expires_at < now() - interval '1 day'");
  return new Date(rows[0].expires_at).toISOString();
}

/** Marks the token used and answers whose it was; null when it is unknown, used, expired or for another purpose. */
export async function spendAccountToken(tx: MetadataQueryable, purpose: TokenPurpose, token: string): Promise<{ user_id: string; new_email: string | null } | null> {
  const { rows } = await tx.query<{ user_id: string; new_email: string | null }>(
    `UPDATE account_tokens SET used_at = now()
      WHERE token_hash = $1 AND purpose = $2 AND used_at IS NULL AND expires_at > now()
      RETURNING user_id, new_email`,
    [sha256(token), purpose],
  );
  return rows[0] ?? null;
}

/** Ends every session and remember-me token of the user inside the caller's transaction. */
export async function endSessionsIn(tx: MetadataQueryable, userId: string): Promise<void> {
  await tx.query('UPDATE dashboard_sessions SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL', [userId]);
  await tx.query('DELETE FROM remember_tokens WHERE user_id = $1', [userId]);
}
