// Password hashing with scrypt (node:crypto): N = 2^15, r = 8, p = 1, 16-byte salt, 32-byte key,
// ~32 MiB and ~50–100 ms per hash on a small server. The parameters travel in the stored string,
// so raising them later only affects new hashes. Unknown accounts are checked against a fixed
// dummy hash, so a login costs the same time whether the email exists or not.
import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

const N = 2 ** 15;
const R = 8;
const P = 1;
const KEY_LENGTH = 32;
// scrypt needs 128 * N * r bytes; Node's default ceiling (32 MiB) is just below that.
const MAX_MEMORY = 64 * 1024 * 1024;

export const PASSWORD_MIN_LENGTH = 10;
export const PASSWORD_MAX_LENGTH = 256;

function derive(password: string, salt: Buffer, n: number, r: number, p: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFKC'), salt, KEY_LENGTH, { N: n, r, p, maxmem: MAX_MEMORY }, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, N, R, P);
  return `scrypt$${N}$${R}$${P}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

const DUMMY_HASH = `scrypt$${N}$${R}$${P}$${Buffer.alloc(16, 7).toString('base64url')}$${Buffer.alloc(KEY_LENGTH, 9).toString('base64url')}`;

/** True when `password` matches `stored`; with `stored` undefined it spends the same time and says no. */
export async function verifyPassword(password: string, stored: string | null | undefined): Promise<boolean> {
  const [scheme, n, r, p, salt, key] = (stored ?? DUMMY_HASH).split('$');
  if (scheme !== 'scrypt' || !salt || !key) return false;
  const expected = Buffer.from(key, 'base64url');
  const actual = await derive(password, Buffer.from(salt, 'base64url'), Number(n), Number(r), Number(p));
  return stored !== undefined && stored !== null && actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** Why the password given as `field` is not acceptable, in a sentence naming the field, or null. */
export function passwordProblem(password: string, field = 'password'): string | null {
  if (password.length < PASSWORD_MIN_LENGTH) return `${field} must be at least ${PASSWORD_MIN_LENGTH} characters`;
  if (password.length > PASSWORD_MAX_LENGTH) return `${field} must be at most ${PASSWORD_MAX_LENGTH} characters`;
  return null;
}
