// Response schemas of signing in and of the session API (services/auth.service.ts and the sign-in
// steps of services/security.service.ts): one declaration publishes them and types the handlers.
import { Type } from '@sinclair/typebox';
import { INSTANCE_ROLES } from './roles.ts';
import { DateTime, nullable, object, stringEnum, Uuid } from '../openapi/responses.ts';

export const UserPrincipal = object({ id: Uuid, email: Type.String(), role: stringEnum(INSTANCE_ROLES) });

export const SessionView = object({
  issued_at: DateTime,
  expires_at: DateTime,
  duration_seconds: Type.Integer(),
  warning_seconds: Type.Integer({ description: 'How long before expiry the dashboard warns' }),
  remembered: Type.Boolean(),
  remember_expires_at: nullable(DateTime),
  remember_me_duration_days: Type.Integer(),
});

/** A completed sign-in; the session cookies come with it (Set-Cookie). */
export const SignedIn = object({ status: Type.Literal('ok'), user: UserPrincipal, session: SessionView });

/** Password accepted, a second factor is due: POST the challenge with a code to /api/auth/mfa/…/verify. */
export const MfaRequired = object({ status: Type.Literal('mfa_required'), challenge_token: Type.String(), factors: Type.Array(stringEnum(['totp', 'recovery_code'])) });

export const LoginResult = Type.Union([SignedIn, MfaRequired]);

/** The session API: who is signed in, and the session's times at the top level. */
export const CurrentSession = Type.Composite([object({ user: UserPrincipal }), SessionView], { additionalProperties: false });

export const Ok = object({ status: Type.Literal('ok') });
