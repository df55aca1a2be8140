// Passkeys (WebAuthn, via @simplewebauthn/server): registration and discoverable sign-in bound to
// the public URL's origin and host, the list people manage in their security settings, and the
// rule that the last usable primary login method cannot be removed. Challenges travel in signed
// short-lived tokens (SessionService.signChallenge), so the server keeps no ceremony state.
import { randomUUID } from 'node:crypto';
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from '@simplewebauthn/server';
import { BRAND } from '../brand.ts';
import { conflict, notFound, PlumbError, validationFailed } from '../errors.ts';
import type { MetadataQueryable, MetadataStore } from '../stores/metadata/index.ts';
import { pageOf } from '../pagination.ts';
import { usableSignInMethods } from './federated/identities.ts';

/** Enough for every device a person owns; keeps excludeCredentials lists short. */
export const MAX_PASSKEYS_PER_USER = 20;

/**
 * @simplewebauthn/server, loaded at the first ceremony: with the ASN.1 and X.509 libraries it
 * brings it is ~7 MiB of every node's heap, most of whose people sign in with a password.
 */
let webauthn: Promise<typeof import('@simplewebauthn/server')> | undefined;
const loadWebauthn = () => (webauthn ??= import('@simplewebauthn/server'));
const CEREMONY_TIMEOUT_MS = 300_000;

export interface RelyingParty {
  id: string;
  name: string;
  origin: string;
}

export interface PasskeyView {
  id: string;
  name: string;
  created_at: string;
  last_used_at: string | null;
}

/** rpID is the public URL's host name; browsers only hand out assertions for that origin. */
export function relyingPartyOf(publicUrl: string): RelyingParty {
  const url = new URL(publicUrl);
  return { id: url.hostname, name: BRAND, origin: url.origin };
}

/** The WebAuthn user handle: the account id's 16 bytes (no personal data on the authenticator). */
export const userHandleOf = (userId: string) => new Uint8Array(Buffer.from(userId.replaceAll('-', ''), 'hex'));

const VIEW_COLUMNS = `id, name,
  to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at,
  to_char(last_used_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS last_used_at`;

const signInFailed = (message = 'Passkey sign-in failed') => new PlumbError(401, 'unauthorized', message);

export async function registrationOptions(db: MetadataQueryable, rp: RelyingParty, user: { id: string; email: string }): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const { rows } = await db.query<{ credential_id: string; transports: string[] }>('SELECT credential_id, transports FROM passkeys WHERE user_id = $1', [user.id]);
  if (rows.length >= MAX_PASSKEYS_PER_USER) throw conflict(`An account can have at most ${MAX_PASSKEYS_PER_USER} passkeys; remove one first`);
  return (await loadWebauthn()).generateRegistrationOptions({
    rpName: rp.name,
    rpID: rp.id,
    userName: user.email,
    userDisplayName: user.email,
    userID: userHandleOf(user.id),
    attestationType: 'none',
    timeout: CEREMONY_TIMEOUT_MS,
    // The same authenticator twice would be one device counted as two login methods.
    excludeCredentials: rows.map((r) => ({ id: r.credential_id, transports: r.transports })),
    authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'preferred' },
  });
}

/** Verifies the authenticator's attestation against the challenge and stores the credential. */
export async function registerPasskey(
  db: MetadataQueryable,
  rp: RelyingParty,
  input: { userId: string; expectedChallenge: string; response: RegistrationResponseJSON; name?: string },
): Promise<PasskeyView> {
  let info: Extract<Awaited<ReturnType<typeof verifyRegistrationResponse>>, { verified: true }>['registrationInfo'];
  try {
    const result = await (await loadWebauthn()).verifyRegistrationResponse({
      response: input.response,
      expectedChallenge: input.expectedChallenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      requireUserVerification: false,
    });
    if (!result.verified) throw new Error('the attestation did not verify');
    info = result.registrationInfo;
  } catch (err) {
    throw validationFailed([{ field: 'response', message: `response could not be verified as a passkey: ${(err as Error).message}`, type: 'passkey' }]);
  }
  const { rows: counted } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM passkeys WHERE user_id = $1', [input.userId]);
  if (counted[0].n >= MAX_PASSKEYS_PER_USER) throw conflict(`An account can have at most ${MAX_PASSKEYS_PER_USER} passkeys; remove one first`);
  const transports = (info.credential.transports ?? []).filter((t) => typeof t === 'string' && t.length <= 32).slice(0, 8);
  try {
    const { rows } = await db.query<PasskeyView>(
      `INSERT INTO passkeys (id, user_id, credential_id, public_key, counter, transports, name)
       VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${VIEW_COLUMNS}`,
      [randomUUID(), input.userId, info.credential.id, Buffer.from(info.credential.publicKey), info.credential.counter, transports, input.name ?? `Passkey ${counted[0].n + 1}`],
    );
    return rows[0];
  } catch (err) {
    if ((err as { code?: string }).code === '23505') throw conflict('This passkey is already registered');
    throw err;
  }
}

/** Discoverable sign-in: no allowCredentials, the authenticator offers the accounts it holds. */
export async function authenticationOptions(rp: RelyingParty): Promise<PublicKeyCredentialRequestOptionsJSON> {
  return (await loadWebauthn()).generateAuthenticationOptions({ rpID: rp.id, userVerification: 'preferred', timeout: CEREMONY_TIMEOUT_MS });
}

/**
 * Verifies an assertion and records its signature counter. A counter that did not grow (when the
 * authenticator keeps one) means a cloned authenticator or a replayed assertion: refused. The
 * conditional UPDATE makes the check and the record one step, so a replay racing the original loses.
 */
export async function authenticatePasskey(
  db: MetadataQueryable,
  rp: RelyingParty,
  input: { expectedChallenge: string; response: AuthenticationResponseJSON },
): Promise<{ userId: string; userVerified: boolean }> {
  const { rows } = await db.query<{ id: string; user_id: string; credential_id: string; public_key: Uint8Array; counter: number; transports: string[] }>(
    'SELECT id, user_id, credential_id, public_key, counter, transports FROM passkeys WHERE credential_id = $1',
    [input.response.id],
  );
  const passkey = rows[0];
  if (!passkey) throw signInFailed('This passkey is not registered here');
  const handle = input.response.response.userHandle;
  if (handle !== undefined && handle !== Buffer.from(userHandleOf(passkey.user_id)).toString('base64url')) throw signInFailed();
  let verified: Awaited<ReturnType<typeof verifyAuthenticationResponse>>;
  try {
    verified = await (await loadWebauthn()).verifyAuthenticationResponse({
      response: input.response,
      expectedChallenge: input.expectedChallenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      credential: { id: passkey.credential_id, publicKey: new Uint8Array(passkey.public_key), counter: Number(passkey.counter), transports: passkey.transports },
      requireUserVerification: false,
    });
  } catch {
    throw signInFailed();
  }
  if (!verified.verified) throw signInFailed();
  const { newCounter, userVerified } = verified.authenticationInfo;
  const { rowCount } = await db.query(
    'UPDATE passkeys SET counter = $2, last_used_at = now() WHERE id = $1 AND (counter < $2 OR (counter = 0 AND $2 = 0))',
    [passkey.id, newCounter],
  );
  if (rowCount !== 1) throw signInFailed();
  return { userId: passkey.user_id, userVerified };
}

export async function listPasskeys(db: MetadataQueryable, userId: string, page: { limit: number; offset: number }) {
  const { rows: items } = await db.query<PasskeyView>(`SELECT ${VIEW_COLUMNS} FROM passkeys WHERE user_id = $1 ORDER BY created_at, id LIMIT $2 OFFSET $3`, [
    userId,
    page.limit,
    page.offset,
  ]);
  const { rows: counted } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM passkeys WHERE user_id = $1', [userId]);
  const total = counted[0].n;
  return pageOf(items, total, page);
}

export async function renamePasskey(db: MetadataQueryable, userId: string, id: string, name: string): Promise<PasskeyView> {
  const { rows } = await db.query<PasskeyView>(`UPDATE passkeys SET name = $3 WHERE id = $1 AND user_id = $2 RETURNING ${VIEW_COLUMNS}`, [id, userId, name]);
  if (!rows[0]) throw notFound('Passkey not found');
  return rows[0];
}

/**
 * Removes a passkey unless it is the last way to sign in (no password, no other passkey). The user
 * row is locked so two deletions at once cannot each think the other passkey remains.
 */
export async function deletePasskey(store: MetadataStore, userId: string, id: string, enabledProviders: readonly string[] = []): Promise<void> {
  await store.transaction(async (tx) => {
    const methods = await usableSignInMethods(tx, userId, enabledProviders);
    const { rows: keys } = await tx.query<{ id: string }>('SELECT id FROM passkeys WHERE user_id = $1', [userId]);
    if (!keys.some((k) => k.id === id)) throw notFound('Passkey not found');
    if (methods <= 1) {
      throw conflict('This is your only way to sign in: add another passkey, set a password or link a provider before removing it');
    }
    await tx.query('DELETE FROM passkeys WHERE id = $1 AND user_id = $2', [id, userId]);
  });
}

/** What the security settings page shows. */
export async function securityOverview(db: MetadataQueryable, userId: string) {
  const { rows } = await db.query<{ totp_enabled: boolean; recovery_codes_left: number; passkeys: number; has_password: boolean }>(
    `SELECT u.totp_enabled_at IS NOT NULL AS totp_enabled,
            (SELECT count(*)::int FROM recovery_codes r WHERE r.user_id = u.id AND r.used_at IS NULL) AS recovery_codes_left,
            (SELECT count(*)::int FROM passkeys p WHERE p.user_id = u.id) AS passkeys,
            u.password_hash IS NOT NULL AS has_password
       FROM users u WHERE u.id = $1`,
    [userId],
  );
  if (!rows[0]) throw notFound('Account not found');
  return rows[0];
}
