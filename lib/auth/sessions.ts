// Dashboard sessions: an HS256 JWT in an HttpOnly cookie (lifetime -auth-session-minutes) naming a
// row of dashboard_sessions, and, when the user chose remember-me, a separate opaque token (stored
// hashed, rotated each time it renews a session, deleted on logout). Every request checks the row,
// so signing out, or a password or role change ending every session of a user, takes effect at
// once on every node; a signature alone never keeps a session alive.
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { jwtVerify, SignJWT } from 'jose';
import type { Config } from '../config.ts';
import { unauthorized, unavailable } from '../errors.ts';
import type { MetadataQueryable } from '../stores/metadata/index.ts';
import type { InstanceRole } from './roles.ts';

/** How long an MFA challenge token from a first sign-in step (password, passkey, provider) stays usable. */
export const MFA_CHALLENGE_SECONDS = 300;

export const SESSION_COOKIE = 'plumb_session';
export const REMEMBER_COOKIE = 'plumb_remember';

/** Plain JSON: rides in ctx.meta across nodes. */
export interface UserPrincipal {
  id: string;
  email: string;
  role: InstanceRole;
}

export interface SessionInfo {
  /** The dashboard_sessions row this session lives by. */
  id: string;
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
}

/** Clock skew tolerated between the nodes that sign and check a session. */
const SKEW_SECONDS = 60;
/** How long a client is asked to wait when the store cannot answer whether its session is alive. */
const STORE_RETRY_SECONDS = 5;

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
  /** A fresh lifetime for the same session and remember-me token; 401 when the session has ended meanwhile. */
  extend(user: UserPrincipal, session: SessionInfo): Promise<Authenticated>;
  /** Ends the session on the server, deletes the remember-me token and returns cookies that clear both. */
  logout(session: SessionInfo | undefined): Promise<string[]>;
  /** Ends every session and remember-me token of the user, on every node at once. */
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
    const { rows } = await db().query<UserRow>('SELECT id, email, role FROM users WHERE id = $1', [id]);
    const row = rows[0] ?? null;
    if (users.size > 10_000) users.clear();
    users.set(id, { row, expires: Date.now() + 3_000 });
    return row;
  }

  /** Signs the cookie of a session whose row already says it lives until `expiresAt`. */
  async function sign(user: UserRow, sessionId: string, issuedAt: number, expiresAt: number, remember?: { id: string; expiresAt: number }): Promise<Authenticated> {
    const claims: Record<string, unknown> = { sid: sessionId };
    if (remember) claims.rm = remember.id;
    const jwt = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setSubject(user.id).setIssuedAt(issuedAt).setExpirationTime(expiresAt).sign(secret);
    return {
      user: { id: user.id, email: user.email, role: user.role },
      session: { id: sessionId, issuedAt, expiresAt, rememberId: remember?.id, rememberExpiresAt: remember?.expiresAt },
      setCookies: [cookie(SESSION_COOKIE, jwt, lifetime)],
    };
  }

  /** A new session row and its cookie. */
  async function issue(user: UserRow, remember?: { id: string; expiresAt: number }): Promise<Authenticated> {
    const issuedAt = Math.floor(Date.now() / 1000);
    const expiresAt = issuedAt + lifetime;
    const sessionId = randomUUID();
    await db().query('INSERT INTO dashboard_sessions (id, user_id, expires_at) VALUES ($1, $2, to_timestamp($3))', [sessionId, user.id, expiresAt]);
    // Ended and expired rows can go: their cookies fail the check anyway. Now and then is enough.
    if (Math.random() < 0.02) await db().query("DELETE FROM dashboard_sessions WHERE expires_at < now() - interval '1 day'");
    return sign(user, sessionId, issuedAt, expiresAt, remember);
  }

  /** The claims of a well-formed, unexpired session cookie, or null for anything else. */
  async function sessionClaims(jwt: string): Promise<{ userId: string; sessionId: string; issuedAt: number; expiresAt: number; rememberId?: string } | null> {
    try {
      const { payload } = await jwtVerify(jwt, secret, { algorithms: ['HS256'], requiredClaims: ['sub', 'iat', 'exp'] });
      const { sub, sid, iat, exp, rm } = payload;
      if (typeof sub !== 'string' || typeof sid !== 'string' || typeof iat !== 'number' || typeof exp !== 'number') return null;
      // A cookie signed for longer than sessions live here (a leaked key, or a setting since
      // lowered) is refused, as is one issued in the future.
      const now = Math.floor(Date.now() / 1000);
      if (exp - iat > lifetime + SKEW_SECONDS || iat > now + SKEW_SECONDS || !/^[0-9a-f-]{36}$/.test(sid)) return null;
      return { userId: sub, sessionId: sid, issuedAt: iat, expiresAt: exp, rememberId: typeof rm === 'string' ? rm : undefined };
    } catch {
      return null;
    }
  }

  /** The store could not say whether the session is alive: the client keeps its cookie and retries. */
  const storeDown = (err: unknown) => {
    throw Object.assign(unavailable('Sessions cannot be checked right now; try again shortly', STORE_RETRY_SECONDS), { cause: err });
  };

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
      const claims = jwt ? await sessionClaims(jwt) : null;
      if (claims) {
        // One look-up answers whether the session is alive and who its user is now; the remember-me
        // token's end rides along when the session has one.
        const { rows } = await db()
          .query<UserRow & { remember_expires: number | null }>(
            `SELECT u.id, u.email, u.role, extract(epoch FROM r.expires_at)::bigint AS remember_expires
               FROM dashboard_sessions s
               JOIN users u ON u.id = s.user_id
               LEFT JOIN remember_tokens r ON r.id = $3 AND r.user_id = s.user_id
              WHERE s.id = $1 AND s.user_id = $2 AND s.revoked_at IS NULL AND s.expires_at > now()`,
            [claims.sessionId, claims.userId, claims.rememberId ?? null],
          )
          .catch(storeDown);
        const user = rows[0];
        if (user) {
          const rememberExpiresAt = user.remember_expires === null ? undefined : Number(user.remember_expires);
          return {
            user: { id: user.id, email: user.email, role: user.role },
            session: { id: claims.sessionId, issuedAt: claims.issuedAt, expiresAt: claims.expiresAt, rememberId: rememberExpiresAt ? claims.rememberId : undefined, rememberExpiresAt },
            setCookies: [],
          };
        }
      }
      // Expired, ended or forged: remember-me may start a new session.
      const remember = cookies[REMEMBER_COOKIE];
      return remember ? fromRememberToken(remember).catch(storeDown) : null;
    },

    async extend(principal, session) {
      const issuedAt = Math.floor(Date.now() / 1000);
      const expiresAt = issuedAt + lifetime;
      const { rows } = await db().query<UserRow>(
        `UPDATE dashboard_sessions s SET expires_at = to_timestamp($3)
           FROM users u
          WHERE s.id = $1 AND s.user_id = $2 AND u.id = s.user_id AND s.revoked_at IS NULL AND s.expires_at > now()
          RETURNING u.id, u.email, u.role`,
        [session.id, principal.id, expiresAt],
      );
      if (!rows[0]) throw unauthorized('The session has ended; sign in again');
      return sign(rows[0], session.id, issuedAt, expiresAt, session.rememberId && session.rememberExpiresAt ? { id: session.rememberId, expiresAt: session.rememberExpiresAt } : undefined);
    },

    async logout(session) {
      if (session) await db().query('UPDATE dashboard_sessions SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL', [session.id]);
      if (session?.rememberId) await db().query('DELETE FROM remember_tokens WHERE id = $1', [session.rememberId]);
      return [cookie(SESSION_COOKIE, '', 0), cookie(REMEMBER_COOKIE, '', 0)];
    },

    async revokeAll(userId) {
      await db().query('UPDATE dashboard_sessions SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL', [userId]);
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
