// A person's sign-in security: TOTP enrolment and its recovery codes, passkeys (register, list,
// rename, delete), and the second and passwordless sign-in steps (MFA verify, passkey login).
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import type { Context, ServiceSchema } from 'moleculer';
import {
  authenticatePasskey,
  authenticationOptions,
  deletePasskey,
  listPasskeys,
  registerPasskey,
  registrationOptions,
  relyingPartyOf,
  renamePasskey,
  securityOverview,
} from '../lib/auth/passkeys.ts';
import { enabledProviders } from '../lib/auth/federated/providers.ts';
import { consumeRecoveryCode, replaceRecoveryCodes } from '../lib/auth/recovery-codes.ts';
import * as A from '../lib/auth/responses.ts';
import { createSecretBox } from '../lib/auth/secret-box.ts';
import * as X from '../lib/auth/security-responses.ts';
import { signedInView } from '../lib/auth/session-view.ts';
import { completeTotpSetup, disableTotp, startTotpSetup, totpEnabled, verifyTotp } from '../lib/auth/totp.ts';
import { conflict, PlumbError, validationFailed } from '../lib/errors.ts';
import { enqueueMail, MAIL_QUEUED } from '../lib/mail/outbox.ts';
import { action } from '../lib/openapi/action.ts';
import { NoContent } from '../lib/openapi/responses.ts';
import { type PageQuery, pageParams } from '../lib/pagination.ts';
import type { Runtime } from '../lib/runtime.ts';
import type { RequestMeta } from '../types/meta.ts';
import { MFA_CHALLENGE_SECONDS } from '../lib/auth/sessions.ts';

type Ctx<P = Record<string, never>> = Context<P, RequestMeta>;

/** WebAuthn ceremonies must finish within this many seconds of their start. */
const CEREMONY_SECONDS = 300;
const MFA_FACTORS: ('totp' | 'recovery_code')[] = ['totp', 'recovery_code'];

const code = 'string|min:1|max:64|trim';
const challengeToken = 'string|min:1|max:4096';
const passkeyName = 'string|min:1|max:64|trim';
/** A signed-in person's TOTP or recovery code that does not prove the second factor: a field of their form. */
const wrongCode = () => validationFailed([{ field: 'code', message: 'code is invalid or already used', type: 'code' }]);
const b64url = (max: number) => ({ type: 'string', min: 1, max, pattern: /^[A-Za-z0-9_-]+={0,2}$/ });
/** A credential as navigator.credentials JSON-encodes it: one envelope, the `response` fields differ. */
const credentialResponse = (response: Record<string, unknown>) => ({
  type: 'object',
  props: {
    id: b64url(1024),
    rawId: b64url(1024),
    type: { type: 'equal', value: 'public-key' },
    response: { type: 'object', props: response },
    clientExtensionResults: { type: 'object', optional: true },
  },
});
/** What navigator.credentials.create() gives (RegistrationResponseJSON). */
const registrationResponse = credentialResponse({
  clientDataJSON: b64url(8192),
  attestationObject: b64url(32768),
  transports: { type: 'array', items: 'string|max:32', max: 8, optional: true },
});
/** What navigator.credentials.get() gives (AuthenticationResponseJSON). */
const authenticationResponse = credentialResponse({
  clientDataJSON: b64url(8192),
  authenticatorData: b64url(8192),
  // Post-quantum passkeys sign with ML-DSA (offered first where Node supports it): up to
  // 4,627 bytes for ML-DSA-87, 6,170 characters here.
  signature: b64url(8192),
  userHandle: { ...b64url(256), optional: true },
});

const badChallenge = () => new PlumbError(401, 'unauthorized', 'The sign-in challenge is invalid or has expired; sign in again');
const badCode = () => new PlumbError(401, 'unauthorized', 'Invalid or already used code');

export default function createSecurityService(runtime: Runtime): ServiceSchema {
  const { config, sessions } = runtime;
  const totpBox = createSecretBox(runtime.jwtSecret, 'totp');
  const rp = relyingPartyOf(config.publicUrl);
  const db = () => runtime.metadata();

  /** Starts the session of a person who just proved who they are, and answers like /api/login. */
  async function signIn(ctx: Ctx<unknown>, userId: string, remember: boolean) {
    const result = await sessions.start(userId, { remember });
    ctx.meta.$responseHeaders = { 'Set-Cookie': result.setCookies, 'Cache-Control': 'no-store' };
    return signedInView(config, result);
  }

  /** The user id and remember-me choice an MFA challenge from password (or passkey) sign-in carries. */
  async function mfaChallenge(token: string) {
    const challenge = await sessions.verifyChallenge('mfa', token);
    if (!challenge) throw badChallenge();
    return {
      userId: challenge.subject,
      remember: challenge.data.remember === true,
      // Spent only once the second factor checked out, so a mistyped code does not cost the challenge.
      spend: async () => {
        if (!(await sessions.spendChallenge(challenge))) throw badChallenge();
      },
    };
  }

  /** The TOTP change committed (its webhook event with it, lib/auth/totp.ts): the dispatcher may look now. */
  const announceUpdate = (ctx: Ctx<unknown>) => {
    const { id, email, role } = ctx.meta.user!;
    ctx.emit('ops.system.user.updated', { user_id: id, email, role });
  };

  const noStore = (ctx: Ctx<unknown>) => {
    ctx.meta.$responseHeaders = { 'Cache-Control': 'no-store' };
  };

  return {
    name: 'security',
    settings: { rest: '/' },
    actions: {
      overview: action({
        rest: 'GET /api/user/security',
        auth: 'user',
        params: {},
        openapi: { summary: 'Security settings at a glance: TOTP, recovery codes left, passkeys, password', tags: ['security'], response: X.SecurityOverview },
        handler: (ctx: Ctx) => securityOverview(db(), ctx.meta.user!.id),
      }),

      totpSetupStart: action({
        rest: 'POST /api/user/security/totp/setup/start',
        auth: 'user',
        params: {},
        openapi: { summary: 'Start TOTP enrolment: a new secret with its otpauth URL and QR code (SVG), shown only here', tags: ['security'], response: X.TotpEnrolment, errors: [409] },
        handler(ctx: Ctx) {
          noStore(ctx);
          return startTotpSetup(db(), totpBox, ctx.meta.user!);
        },
      }),

      totpSetupVerify: action({
        rest: 'POST /api/user/security/totp/setup/verify',
        auth: 'user',
        // A code is a secret worth guessing: the strict bucket, even behind a session.
        rateLimit: 'login',
        params: { code },
        openapi: { summary: 'Finish TOTP enrolment with a code from the app; returns ten one-time recovery codes and ends other sessions', tags: ['security'], response: X.RecoveryCodes, errors: [409] },
        async handler(ctx: Ctx<{ code: string }>) {
          const user = ctx.meta.user!;
          const recoveryCodes = await completeTotpSetup(db(), totpBox, user.id, ctx.params.code);
          // A new factor changes the account's security: other sessions end, this one continues anew.
          await sessions.revokeAll(user.id);
          const result = await sessions.start(user.id, { remember: ctx.meta.session?.rememberId !== undefined });
          ctx.meta.$responseHeaders = { 'Set-Cookie': result.setCookies, 'Cache-Control': 'no-store' };
          announceUpdate(ctx);
          return { recovery_codes: recoveryCodes };
        },
      }),

      totpDisable: action({
        rest: 'POST /api/user/security/totp/disable',
        auth: 'user',
        rateLimit: 'login',
        params: { code },
        openapi: { summary: 'Turn TOTP off (needs a current code or a recovery code); deletes the recovery codes', tags: ['security'], response: X.SecurityOverview, errors: [409] },
        async handler(ctx: Ctx<{ code: string }>) {
          const userId = ctx.meta.user!.id;
          if (!(await totpEnabled(db(), userId))) throw conflict('Two-factor authentication is not enabled');
          const proven = (await verifyTotp(db(), totpBox, userId, ctx.params.code)) || (await consumeRecoveryCode(db(), userId, ctx.params.code));
          if (!proven) throw wrongCode();
          await disableTotp(db(), userId);
          ctx.broadcast(MAIL_QUEUED, {});
          announceUpdate(ctx);
          return securityOverview(db(), userId);
        },
      }),

      recoveryCodesRegenerate: action({
        rest: 'POST /api/user/security/recovery-codes/regenerate',
        auth: 'user',
        rateLimit: 'login',
        params: { code },
        openapi: { summary: 'Replace the recovery codes with ten new ones (needs a current TOTP code); the old ones stop working', tags: ['security'], response: X.RecoveryCodes, errors: [409] },
        async handler(ctx: Ctx<{ code: string }>) {
          const userId = ctx.meta.user!.id;
          if (!(await totpEnabled(db(), userId))) throw conflict('Two-factor authentication is not enabled');
          if (!(await verifyTotp(db(), totpBox, userId, ctx.params.code))) throw wrongCode();
          noStore(ctx);
          return { recovery_codes: await db().transaction((tx) => replaceRecoveryCodes(tx, userId)) };
        },
      }),

      mfaTotpVerify: action({
        rest: 'POST /api/auth/mfa/totp/verify',
        auth: 'none',
        rateLimit: 'login',
        params: { challenge_token: challengeToken, code },
        openapi: { summary: 'Second sign-in step: the challenge from /api/login and a TOTP code; starts the session', tags: ['security'], response: A.SignedIn },
        async handler(ctx: Ctx<{ challenge_token: string; code: string }>) {
          const { userId, remember, spend } = await mfaChallenge(ctx.params.challenge_token);
          if (!(await verifyTotp(db(), totpBox, userId, ctx.params.code))) throw badCode();
          await spend();
          return signIn(ctx, userId, remember);
        },
      }),

      mfaRecoveryCodeVerify: action({
        rest: 'POST /api/auth/mfa/recovery-code/verify',
        auth: 'none',
        rateLimit: 'login',
        params: { challenge_token: challengeToken, code },
        openapi: { summary: 'Second sign-in step with a one-time recovery code instead of TOTP; the code is used up', tags: ['security'], response: A.SignedIn },
        async handler(ctx: Ctx<{ challenge_token: string; code: string }>) {
          const { userId, remember, spend } = await mfaChallenge(ctx.params.challenge_token);
          if (!(await consumeRecoveryCode(db(), userId, ctx.params.code))) throw badCode();
          await spend();
          return signIn(ctx, userId, remember);
        },
      }),

      passkeyRegisterStart: action({
        rest: 'POST /api/user/security/passkeys/register/start',
        auth: 'user',
        params: {},
        openapi: { summary: 'Start adding a passkey: WebAuthn creation options and the signed challenge token', tags: ['security'], response: X.RegistrationStart, errors: [409] },
        async handler(ctx: Ctx) {
          const user = ctx.meta.user!;
          const options = await registrationOptions(db(), rp, user);
          const token = await sessions.signChallenge('passkey-register', user.id, { challenge: options.challenge }, CEREMONY_SECONDS);
          noStore(ctx);
          return { options, challenge_token: token };
        },
      }),

      passkeyRegisterFinish: action({
        rest: 'POST /api/user/security/passkeys/register/finish',
        location: '/api/user/security/passkeys/{passkey.id}',
        auth: 'user',
        params: { challenge_token: challengeToken, response: registrationResponse, name: { type: 'string', min: 1, max: 64, trim: true, optional: true } },
        openapi: { summary: "Finish adding a passkey with the authenticator's attestation", tags: ['security'], successStatus: 201, response: X.PasskeyEnvelope, errors: [409] },
        async handler(ctx: Ctx<{ challenge_token: string; response: RegistrationResponseJSON; name?: string }>) {
          const user = ctx.meta.user!;
          const challenge = await sessions.verifyChallenge('passkey-register', ctx.params.challenge_token);
          // The ceremony belongs to the person who started it.
          if (!challenge || challenge.subject !== user.id || typeof challenge.data.challenge !== 'string' || !(await sessions.spendChallenge(challenge))) {
            throw validationFailed([{ field: 'challenge_token', message: 'challenge_token is invalid, used or expired; start again', type: 'challenge' }]);
          }
          const response = { ...ctx.params.response, clientExtensionResults: ctx.params.response.clientExtensionResults ?? {} };
          const expectedChallenge = challenge.data.challenge;
          const passkey = await db().transaction(async (tx) => {
            const added = await registerPasskey(tx, rp, { userId: user.id, expectedChallenge, response, name: ctx.params.name });
            await enqueueMail(tx, { to: user.email, template: 'passkey_added', params: { name: added.name, added_at: new Date().toISOString() } });
            return added;
          });
          ctx.broadcast(MAIL_QUEUED, {});
          ctx.meta.$statusCode = 201;
          return { passkey };
        },
      }),

      passkeyList: action({
        rest: 'GET /api/user/security/passkeys',
        auth: 'user',
        params: pageParams,
        openapi: { summary: "The signed-in person's passkeys, oldest first", tags: ['security'], response: X.PasskeyPage },
        handler: (ctx: Ctx<PageQuery>) => listPasskeys(db(), ctx.meta.user!.id, ctx.params),
      }),

      passkeyRename: action({
        rest: 'PATCH /api/user/security/passkeys/:id',
        auth: 'user',
        params: { id: 'uuid', name: passkeyName },
        openapi: { summary: 'Rename a passkey', tags: ['security'], response: X.PasskeyEnvelope },
        async handler(ctx: Ctx<{ id: string; name: string }>) {
          return { passkey: await renamePasskey(db(), ctx.meta.user!.id, ctx.params.id, ctx.params.name) };
        },
      }),

      passkeyDelete: action({
        rest: 'DELETE /api/user/security/passkeys/:id',
        auth: 'user',
        params: { id: 'uuid' },
        openapi: { summary: 'Remove a passkey; refused (409) when it is the last way to sign in', tags: ['security'], successStatus: 204, response: NoContent, errors: [409] },
        async handler(ctx: Ctx<{ id: string }>) {
          await deletePasskey(db(), ctx.meta.user!.id, ctx.params.id, enabledProviders(config).map((p) => p.id));
          ctx.meta.$statusCode = 204;
          return null;
        },
      }),

      passkeyLoginStart: action({
        rest: 'POST /api/auth/passkey/login/start',
        auth: 'none',
        rateLimit: 'login',
        params: {},
        openapi: { summary: 'Start a passkey sign-in (discoverable: no email needed): request options and the signed challenge token', tags: ['security'], response: X.LoginStart },
        async handler(ctx: Ctx) {
          const options = await authenticationOptions(rp);
          // No account is known yet; the subject only has to be present.
          const token = await sessions.signChallenge('passkey-login', 'anonymous', { challenge: options.challenge }, CEREMONY_SECONDS);
          noStore(ctx);
          return { options, challenge_token: token };
        },
      }),

      passkeyLoginFinish: action({
        rest: 'POST /api/auth/passkey/login/finish',
        auth: 'none',
        rateLimit: 'login',
        params: { challenge_token: challengeToken, response: authenticationResponse, remember_me: { type: 'boolean', optional: true, default: false, convert: true } },
        openapi: { summary: "Finish a passkey sign-in with the authenticator's assertion; starts the session or asks for the second factor", tags: ['security'], response: A.LoginResult },
        async handler(ctx: Ctx<{ challenge_token: string; response: AuthenticationResponseJSON; remember_me: boolean }>) {
          const challenge = await sessions.verifyChallenge('passkey-login', ctx.params.challenge_token);
          if (!challenge || typeof challenge.data.challenge !== 'string') throw badChallenge();
          // One assertion per challenge: a captured request cannot sign in again.
          if (!(await sessions.spendChallenge(challenge))) throw badChallenge();
          const response = { ...ctx.params.response, clientExtensionResults: ctx.params.response.clientExtensionResults ?? {} };
          const { userId, userVerified } = await authenticatePasskey(db(), rp, { expectedChallenge: challenge.data.challenge, response });
          // A passkey that verified its holder (PIN, biometrics) is two factors in one. One that only
          // saw a touch is like a password: TOTP, when enrolled, still has to follow.
          if (!userVerified && (await totpEnabled(db(), userId))) {
            const token = await sessions.signChallenge('mfa', userId, { remember: ctx.params.remember_me }, MFA_CHALLENGE_SECONDS);
            return { status: 'mfa_required' as const, challenge_token: token, factors: MFA_FACTORS };
          }
          return signIn(ctx, userId, ctx.params.remember_me);
        },
      }),
    },
  };
}
