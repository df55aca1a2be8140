// The session-signing key: PLUMB_JWT_SECRET when set, else a random key generated on first start
// and kept in the data dir, so sessions survive restarts.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { envName } from '../brand.ts';
import type { Log } from '../log.ts';

export const MIN_SECRET_BYTES = 32;

export function resolveJwtSecret(configured: string | undefined, dataDir: string, log: Log): Uint8Array {
  if (configured !== undefined) {
    const bytes = Buffer.from(configured, 'utf8');
    if (bytes.length < MIN_SECRET_BYTES) {
      log.warn({ setting: envName('JWT_SECRET'), bytes: bytes.length }, `${envName('JWT_SECRET')} is shorter than ${MIN_SECRET_BYTES} bytes; use a longer random value`);
    }
    return new Uint8Array(bytes);
  }
  const file = join(dataDir, 'jwt-secret');
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  try {
    // 'wx' fails when the file exists, so two processes never overwrite each other's key.
    writeFileSync(file, randomBytes(48).toString('base64url'), { flag: 'wx', mode: 0o600 });
    log.info({ file }, 'generated a JWT secret in the data dir');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const stored = readFileSync(file, 'utf8').trim();
  if (stored.length < MIN_SECRET_BYTES) throw new Error(`${file} holds a secret shorter than ${MIN_SECRET_BYTES} bytes; delete it to generate a new one`);
  return new Uint8Array(Buffer.from(stored, 'utf8'));
}
