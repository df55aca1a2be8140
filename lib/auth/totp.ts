// TOTP second factor (RFC 6238: HMAC-SHA-1, 6 digits, 30 s steps) with otplib: enrolment with a
// server-made QR code, verification with ±1 step of clock drift, and replay refusal (a code whose
// time step is not after the last accepted step is refused). Seeds are sealed at rest (secret-box).
import { enqueueMail } from '../mail/outbox.ts';
import { generateSecret, generateURI, verify } from 'otplib';
import { BRAND } from '../brand.ts';
import { conflict, validationFailed } from '../errors.ts';
import type { MetadataQueryable, MetadataStore } from '../stores/metadata/index.ts';
import { queueOperationalEvent } from '../webhooks/outbox.ts';
import { deleteRecoveryCodes, replaceRecoveryCodes } from './recovery-codes.ts';
import type { SecretBox } from './secret-box.ts';

export const TOTP_PERIOD_SECONDS = 30;
export const TOTP_DIGITS = 6;
/** Steps accepted either side of now: phones' clocks drift, and people type slowly. */
export const TOTP_DRIFT_STEPS = 1;

export interface TotpEnrolment {
  secret: string;
  otpauth_url: string;
  qr_svg: string;
}

/**
 * The time step the code belongs to, or null when it matches no step within the drift window or
 * its step is not after `afterStep` (already used, or older than a used one).
 */
export async function matchTotp(secret: string, code: string, afterStep: number | null, nowSeconds = Date.now() / 1000): Promise<number | null> {
  const token = code.replace(/\s/g, '');
  // otplib throws on malformed tokens; a malformed code is simply a wrong one.
  if (!new RegExp(`^\\d{${TOTP_DIGITS}}$`).test(token)) return null;
  const result = await verify({
    secret,
    token,
    algorithm: 'sha1',
    digits: TOTP_DIGITS,
    period: TOTP_PERIOD_SECONDS,
    epoch: Math.floor(nowSeconds),
    epochTolerance: TOTP_DRIFT_STEPS * TOTP_PERIOD_SECONDS,
    afterTimeStep: afterStep ?? undefined,
  });
  // otplib's result type also covers HOTP, which has no time step.
  return result.valid && 'timeStep' in result ? result.timeStep : null;
}

interface TotpRow {
  totp_secret: string | null;
  totp_pending_secret: string | null;
  totp_enabled: boolean;
  totp_last_step: number | null;
}

interface AccountRow {
  id: string;
  email: string;
  role: string;
}

/** The TOTP state shows in the instance's user list: operators' webhooks hear of it, with the change. */
const accountChanged = (tx: MetadataQueryable, account: AccountRow) =>
  queueOperationalEvent(tx, 'system.user.updated', { user_id: account.id, email: account.email, role: account.role });

/** The user's TOTP state; an account deleted meanwhile reads as one without TOTP. */
async function totpRow(db: MetadataQueryable, userId: string): Promise<TotpRow> {
  const { rows } = await db.query<TotpRow>(
    'SELECT totp_secret, totp_pending_secret, totp_enabled_at IS NOT NULL AS totp_enabled, totp_last_step FROM users WHERE id = $1',
    [userId],
  );
  const row = rows[0] ?? { totp_secret: null, totp_pending_secret: null, totp_enabled: false, totp_last_step: null };
  return { ...row, totp_last_step: row.totp_last_step === null ? null : Number(row.totp_last_step) };
}

/** Step 1 of enrolment: a new pending seed, returned once with its otpauth URL and QR code. */
export async function startTotpSetup(db: MetadataQueryable, box: SecretBox, user: { id: string; email: string }): Promise<TotpEnrolment> {
  const secret = generateSecret({ length: 20 });
  const { rowCount } = await db.query('UPDATE users SET totp_pending_secret = $2, updated_at = now() WHERE id = $1 AND totp_enabled_at IS NULL', [
    user.id,
    box.seal(secret, user.id),
  ]);
  if (rowCount !== 1) throw conflict('Two-factor authentication is already enabled; disable it before enrolling again');
  const otpauthUrl = generateURI({ issuer: BRAND, label: user.email, secret, algorithm: 'sha1', digits: TOTP_DIGITS, period: TOTP_PERIOD_SECONDS });
  // qrcode (and the PNG encoder it brings) is loaded at the first enrolment, not by every node.
  const { default: QRCode } = await import('qrcode');
  const qrSvg = await QRCode.toString(otpauthUrl, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
  return { secret, otpauth_url: otpauthUrl, qr_svg: qrSvg };
}

/**
 * Step 2: a code from the new seed proves the app holds it. Enables TOTP (the code's step counts
 * as used) and returns ten fresh recovery codes.
 */
export async function completeTotpSetup(store: MetadataStore, box: SecretBox, userId: string, code: string): Promise<string[]> {
  const row = await totpRow(store, userId);
  if (row.totp_enabled) throw conflict('Two-factor authentication is already enabled');
  const secret = row.totp_pending_secret ? box.open(row.totp_pending_secret, userId) : null;
  if (!row.totp_pending_secret || !secret) throw conflict('No two-factor setup is in progress; start the setup first');
  const step = await matchTotp(secret, code, null);
  if (step === null) throw validationFailed([{ field: 'code', message: "code is not valid; check the authenticator app's clock and try again", type: 'totp' }]);
  return store.transaction(async (tx) => {
    // The pending seed must still be the one the code was checked against (a second setup/start may have replaced it).
    const { rows } = await tx.query<AccountRow>(
      `UPDATE users SET totp_secret = totp_pending_secret, totp_pending_secret = NULL, totp_enabled_at = now(), totp_last_step = $3, updated_at = now()
        WHERE id = $1 AND totp_pending_secret = $2 AND totp_enabled_at IS NULL
        RETURNING id, email, role`,
      [userId, row.totp_pending_secret, step],
    );
    if (rows.length !== 1) throw conflict('The two-factor setup changed meanwhile; start it again');
    await accountChanged(tx, rows[0]);
    return replaceRecoveryCodes(tx, userId);
  });
}

/**
 * True when the code is valid for the user's enabled seed and its step is newer than any used
 * before; that step is then recorded. The conditional UPDATE makes check-and-record atomic, so
 * the same code sent twice at once signs in only once.
 */
export async function verifyTotp(db: MetadataQueryable, box: SecretBox, userId: string, code: string): Promise<boolean> {
  const row = await totpRow(db, userId);
  const secret = row.totp_enabled && row.totp_secret ? box.open(row.totp_secret, userId) : null;
  if (!secret) return false;
  const step = await matchTotp(secret, code, row.totp_last_step);
  if (step === null) return false;
  const { rowCount } = await db.query(
    'UPDATE users SET totp_last_step = $2 WHERE id = $1 AND totp_enabled_at IS NOT NULL AND (totp_last_step IS NULL OR totp_last_step < $2)',
    [userId, step],
  );
  return rowCount === 1;
}

/** Turns TOTP off and deletes the recovery codes (they only exist to stand in for TOTP). */
export async function disableTotp(store: MetadataStore, userId: string): Promise<void> {
  await store.transaction(async (tx) => {
    const { rows } = await tx.query<AccountRow>(
      `UPDATE users SET totp_secret = NULL, totp_pending_secret = NULL, totp_enabled_at = NULL, totp_last_step = NULL, updated_at = now()
        WHERE id = $1 RETURNING id, email, role`,
      [userId],
    );
    if (rows[0]) {
      await accountChanged(tx, rows[0]);
      await enqueueMail(tx, { to: rows[0].email, template: 'totp_disabled', params: { disabled_at: new Date().toISOString(), by_admin: false } });
    }
    await deleteRecoveryCodes(tx, userId);
  });
}

export async function totpEnabled(db: MetadataQueryable, userId: string): Promise<boolean> {
  return (await totpRow(db, userId)).totp_enabled;
}
