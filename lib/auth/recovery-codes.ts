// One-time recovery codes: ten per user, shown once when TOTP is enabled or the set regenerated,
// stored as SHA-256 (they are random, ~50 bits each, so a slow hash buys nothing), each usable once.
import { createHash, randomInt } from 'node:crypto';
import type { MetadataQueryable } from '../stores/metadata/index.ts';

export const RECOVERY_CODE_COUNT = 10;
// No 0/o, 1/l/i: codes are read off paper and typed by hand.
const ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';
const CODE_CHARS = 10;

/** `abcd-efgh-jk`: ten random characters, grouped for reading. */
export function newRecoveryCode(): string {
  let raw = '';
  for (let i = 0; i < CODE_CHARS; i++) raw += ALPHABET[randomInt(ALPHABET.length)];
  return `${raw.slice(0, 4)}-${raw.slice(4, 8)}-${raw.slice(8)}`;
}

/** What a person typed, as it was generated: case, spaces and dashes do not matter. */
export const normaliseRecoveryCode = (input: string) => input.toLowerCase().replace(/[\s-]/g, '');

const hashOf = (code: string) => createHash('sha256').update(normaliseRecoveryCode(code)).digest();

/** Replaces the user's codes with ten new ones and returns them (the only time they are readable). */
export async function replaceRecoveryCodes(tx: MetadataQueryable, userId: string): Promise<string[]> {
  const codes = new Set<string>();
  while (codes.size < RECOVERY_CODE_COUNT) codes.add(newRecoveryCode());
  const list = [...codes];
  await tx.query('DELETE FROM recovery_codes WHERE user_id = $1', [userId]);
  // One row per code; only placeholders are generated here, the values are bound.
  const rows = list.map((_, i) => `($1, $${i + 2})`).join(', ');
  await tx.query(`INSERT INTO recovery_codes (user_id, code_hash) VALUES ${rows}`, [userId, ...list.map(hashOf)]);
  return list;
}

/**
 * Spends one code. The conditional UPDATE is the check and the spend in one statement, so two
 * requests racing with the same code cannot both win.
 */
export async function consumeRecoveryCode(db: MetadataQueryable, userId: string, input: string): Promise<boolean> {
  const normalised = normaliseRecoveryCode(input);
  if (normalised.length !== CODE_CHARS) return false;
  const { rowCount } = await db.query('UPDATE recovery_codes SET used_at = now() WHERE user_id = $1 AND code_hash = $2 AND used_at IS NULL RETURNING user_id', [
    userId,
    hashOf(normalised),
  ]);
  return rowCount === 1;
}

export async function deleteRecoveryCodes(tx: MetadataQueryable, userId: string): Promise<void> {
  await tx.query('DELETE FROM recovery_codes WHERE user_id = $1', [userId]);
}
