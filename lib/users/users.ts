// Accounts: create, find, and the first-run owner. Emails are stored lower-case and trimmed.
import { randomUUID } from 'node:crypto';
import { hashPassword, passwordProblem } from '../auth/passwords.ts';
import type { InstanceRole } from '../auth/roles.ts';
import type { UserPrincipal } from '../auth/sessions.ts';
import { conflict, type FieldError, validationFailed } from '../errors.ts';
import type { MetadataQueryable } from '../stores/metadata/index.ts';

export interface UserRecord extends UserPrincipal {
  password_hash: string | null;
  totp_enabled: boolean;
  created_at: string;
}

export const normaliseEmail = (email: string) => email.trim().toLowerCase();

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export async function createUser(db: MetadataQueryable, input: { email: string; password?: string; role: InstanceRole }): Promise<UserPrincipal> {
  const email = normaliseEmail(input.email);
  const problems: FieldError[] = [];
  if (!EMAIL.test(email) || email.length > 254) problems.push({ field: 'email', message: 'email must be an email address', type: 'email' });
  const problem = input.password === undefined ? null : passwordProblem(input.password);
  if (problem) problems.push({ field: 'password', message: problem, type: 'password' });
  if (problems.length > 0) throw validationFailed(problems);
  const hash = input.password === undefined ? null : await hashPassword(input.password);
  const id = randomUUID();
  try {
    await db.query('INSERT INTO users (id, email, password_hash, role) VALUES ($1, $2, $3, $4)', [id, email, hash, input.role]);
  } catch (err) {
    if ((err as { code?: string }).code === '23505') throw conflict('An account with this email already exists');
    throw err;
  }
  return { id, email, role: input.role };
}

export async function findUserByEmail(db: MetadataQueryable, email: string): Promise<UserRecord | null> {
  const { rows } = await db.query<UserRecord>(
    `SELECT id, email, role, password_hash, totp_enabled_at IS NOT NULL AS totp_enabled, created_at FROM users WHERE email = $1`,
    [normaliseEmail(email)],
  );
  return rows[0] ?? null;
}

export async function findUserById(db: MetadataQueryable, id: string): Promise<UserRecord | null> {
  const { rows } = await db.query<UserRecord>(
    `SELECT id, email, role, password_hash, totp_enabled_at IS NOT NULL AS totp_enabled, created_at FROM users WHERE id = $1`,
    [id],
  );
  return rows[0] ?? null;
}

export async function userCount(db: MetadataQueryable): Promise<number> {
  const { rows } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM users');
  return rows[0].n;
}
