// Dashboard sessions: an HS256 JWT in an HttpOnly cookie (lifetime -auth-session-minutes) and, when
// the user chose remember-me, a separate opaque token (stored hashed, rotated each time it renews a
// session, deleted on logout). A per-user epoch in the JWT lets a password or role change end every
// other session of that user.
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { jwtVerify, SignJWT } from 'jose';
import type { Config } from '../config.ts';
import type { MetadataQueryable } from '../stores/metadata/index.ts';
import type { InstanceRole } from './roles.ts';

export const SESSION_COOKIE = 'plumb_session';
export const REMEMBER_COOKIE = 'plumb_remember';

/** Plain JSON: rides in ctx.meta across nodes. */
export interface UserPrincipal {
  id: string;
  email: string;
  role: InstanceRole;
}

export interface SessionInfo {
  /** Unix seconds. */
  issuedAt: number;
  expiresAt: number;
  rememberId?: string;
  rememberExpiresAt?: number;
}

export interface Authenticated {
  user: UserPrincipal;
  session: SessionInfo;
  /** Set-Cookie values to send (a session renewed from the remember-me token). */
  setCookies: string[];
}

interface UserRow {
  id: string;
  email: string;
  role: InstanceRole;
  session_epoch: number;
}

const sha256 = (value: string) => createHash('sha256').update(value).digest();

export function parseCookies(header: string | undefined): Record<string, string> {
  const cookies: Record<string, string> = {};
  if (!header) return cookies;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq === -1) continue;
    const name = part.slice(0, eq).trim();
    if (name && !(name in cookies)) cookies[name] = part.slice(eq + 1).trim();
  }
  return cookies;
}

export interface SessionService {
  /** A new session (and remember-me token when asked) for a user who just proved who they are. */
  start(userId: string, options: { remember: boolean }): Promise<Authenticated>;
  /** The user behind the request's cookies, renewing from remember-me when the session ran out. */
  authenticate(cookieHeader: string | undefined): Promise<Authenticated | null>;
  /** A fresh session for the same user and remember-me token. */
  extend(user: UserPrincipal, session: SessionInfo): Promise<Authenticated>;
  /** Deletes the remember-me token and returns cookies that clear both. */
  logout(session: SessionInfo | undefined): Promise<string[]>;
  /** Ends every session of the user (other nodes notice within the user cache's few seconds). */
  revokeAll(userId: string): Promise<void>;
  forget(userId: string): void;
  /** Signed short-lived tokens for multi-step flows (MFA challenge, WebAuthn ceremonies). */
  signChallenge(purpose: string, subject: string, data: Record<string, unknown>, ttlSeconds: number): Promise<string>;
  verifyChallenge(purpose: string, token: string): Promise<VerifiedChallenge | null>;
  /** Marks a verified challenge used; false when it already was (a replay). */
  spendChallenge(challenge: VerifiedChallenge): Promise<boolean>;
}

export interface VerifiedChallenge {
  subject: string;
  data: Record<string, unknown>;
  jti: string;
  expiresAt: number;
}

export function createSessionService(config: Config, secret: Uint8Array, db: () => MetadataQueryable): SessionService {
  const lifetime = config.authSessionMinutes * 60;
  const rememberLifetime = config.authRememberMeDays * 86_400;
  const secure = config.publicUrl.startsWith('https:') ? '; Secure' : '';
  const cookie = (name: string, value: string, maxAge: number) => `${name}=${value}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAge}${secure}`;
  const users = new Map<string, { row: UserRow | null; expires: number }>();

  async function loadUser(id: string): Promise<UserRow | null> {
    const hit = users.get(id);
    if (hit && hit.expires > Date.now()) return hit.row;
    const { rows } = await db().query<UserRow>('SELECT id, email, role, session_epoch FROM users WHERE id = $1', [id]);
    const row = rows[0] ?? null;
    if (users.size > 10_000) users.clear();
    users.set(id, { row, expires: Date.now() + 3_000 });
    return row;
  }

  async function issue(user: UserRow, remember?: { id: string; expiresAt: number }): Promise<Authenticated> {
    const issuedAt = Math.floor(Date.now() / 1000);
    const expiresAt = issuedAt + lifetime;
    const claims: Record<string, unknown> = { sv: user.session_epoch };
    if (remember) claims.rm = remember.id;
    const jwt = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setSubject(user.id).setIssuedAt(issuedAt).setExpirationTime(expiresAt).sign(secret);
    return {
      user: { id: user.id, email: user.email, role: user.role },
      session: { issuedAt, expiresAt, rememberId: remember?.id, rememberExpiresAt: remember?.expiresAt },
      setCookies: [cookie(SESSION_COOKIE, jwt, lifetime)],
    };
  }

  async function newRememberToken(userId: string, expiresAt: number) {
    const id = randomUUID();
    const secretPart = randomBytes(32).toString('base64url');
    await db().query('INSERT INTO remember_tokens (id, user_id, token_hash, expires_at) VALUES ($1, $2, $3, to_timestamp($4))', [id, userId, sha256(secretPart), expiresAt]);
    return { id, expiresAt, cookie: cookie(REMEMBER_COOKIE, `${id}.${secretPart}`, expiresAt - Math.floor(Date.now() / 1000)) };
  }

  async function fromRememberToken(value: string): Promise<Authenticated | null> {
    const [id, secretPart] = value.split('.');
    if (!id || !secretPart || !/^[0-9a-f-]{36}$/.test(id)) return null;
    const { rows } = await db().query<{ user_id: string; token_hash: Buffer; expires: number }>(
      'SELECT user_id, token_hash, extract(epoch FROM expires_at)::bigint AS expires FROM remember_tokens WHERE id = $1 AND expires_at > now()',
      [id],
    );
    const row = rows[0];
    if (!row || !timingSafeEqual(Buffer.from(row.token_hash), sha256(secretPart))) return null;
    // Rotate: the used token dies, a new one with the same end replaces it. Only one caller wins.
    const { rowCount } = await db().query('DELETE FROM remember_tokens WHERE id = $1', [id]);
    if (rowCount === 0) return null;
    const user = await loadUser(row.user_id);
    if (!user) return null;
    const next = await newRememberToken(user.id, Number(row.expires));
    const renewed = await issue(user, next);
    renewed.setCookies.push(next.cookie);
    return renewed;
  }

  return {
    async start(userId, { remember }) {
      users.delete(userId);
      const user = await loadUser(userId);
      if (!user) throw new Error('user vanished while signing in');
      if (!remember) return issue(user);
      const token = await newRememberToken(user.id, Math.floor(Date.now() / 1000) + rememberLifetime);
      const started = await issue(user, token);
      started.setCookies.push(token.cookie);
      return started;
    },

    async authenticate(cookieHeader) {
      const cookies = parseCookies(cookieHeader);
      const jwt = cookies[SESSION_COOKIE];
      if (jwt) {
        try {
          const { payload } = await jwtVerify(jwt, secret, { algorithms: ['HS256'] });
          const user = typeof payload.sub === 'string' ? await loadUser(payload.sub) : null;
          if (user && payload.sv === user.session_epoch) {
            const rememberId = typeof payload.rm === 'string' ? payload.rm : undefined;
            let rememberExpiresAt: number | undefined;
            if (rememberId) {
              const { rows } = await db().query<{ expires: number }>('SELECT extract(epoch FROM expires_at)::bigint AS expires FROM remember_tokens WHERE id = $1', [rememberId]);
              rememberExpiresAt = rows[0] ? Number(rows[0].expires) : undefined;
            }
            return {
              user: { id: user.id, email: user.email, role: user.role },
              session: { issuedAt: payload.iat ?? 0, expiresAt: payload.exp ?? 0, rememberId: rememberExpiresAt ? rememberId : undefined, rememberExpiresAt },
              setCookies: [],
            };
          }
        } catch {
          // Expired or forged: fall through to remember-me.
        }
      }
      const remember = cookies[REMEMBER_COOKIE];
      return remember ? fromRememberToken(remember) : null;
    },

    async extend(principal, session) {
      const user = await loadUser(principal.id);
      if (!user) throw new Error('user vanished');
      return issue(user, session.rememberId && session.rememberExpiresAt ? { id: session.rememberId, expiresAt: session.rememberExpiresAt } : undefined);
    },

    async logout(session) {
      if (session?.rememberId) await db().query('DELETE FROM remember_tokens WHERE id = $1', [session.rememberId]);
      return [cookie(SESSION_COOKIE, '', 0), cookie(REMEMBER_COOKIE, '', 0)];
    },

    async revokeAll(userId) {
      await db().query('UPDATE users SET session_epoch = session_epoch + 1, updated_at = now() WHERE id = $1', [userId]);
      await db().query('DELETE FROM remember_tokens WHERE user_id = $1', [userId]);
      users.delete(userId);
    },

    forget: (userId) => void users.delete(userId),

    async spendChallenge(challenge) {
      const { rowCount } = await db().query('INSERT INTO used_challenges (jti, expires_at) VALUES ($1, to_timestamp($2)) ON CONFLICT (jti) DO NOTHING', [
        challenge.jti,
        challenge.expiresAt,
      ]);
      // Expired entries can go: their tokens fail verification anyway. Now and then is enough.
      if (Math.random() < 0.02) await db().query('DELETE FROM used_challenges WHERE expires_at < now()');
      return rowCount === 1;
    },

    async signChallenge(purpose, subject, data, ttlSeconds) {
      return new SignJWT({ ...data, pur: purpose })
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject(subject)
        .setJti(randomUUID())
        .setIssuedAt()
        .setExpirationTime(`${ttlSeconds}s`)
        .sign(secret);
    },

    async verifyChallenge(purpose, token) {
      try {
        const { payload } = await jwtVerify(token, secret, { algorithms: ['HS256'] });
        if (payload.pur !== purpose || typeof payload.sub !== 'string' || typeof payload.jti !== 'string') return null;
        const { pur: _pur, sub, iat: _iat, exp, jti, ...data } = payload;
        return { subject: sub, data, jti, expiresAt: exp ?? 0 };
      } catch {
        return null;
      }
    },
  };
}
