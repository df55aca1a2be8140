// Response schemas of a person's sign-in security (services/security.service.ts): TOTP, recovery
// codes and passkeys, published in the OpenAPI document and typing the handlers.
import type { PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server';
import { Type } from '@sinclair/typebox';
import { DateTime, envelope, nullable, object, page, Uuid } from '../openapi/responses.ts';

export const SecurityOverview = object({
  totp_enabled: Type.Boolean(),
  recovery_codes_left: Type.Integer({ minimum: 0 }),
  passkeys: Type.Integer({ minimum: 0 }),
  has_password: Type.Boolean(),
});

/** Shown only in this answer: the app needs the secret (or the QR code) once. */
export const TotpEnrolment = object({ secret: Type.String(), otpauth_url: Type.String(), qr_svg: Type.String({ description: 'The otpauth URL as an SVG QR code' }) });

export const RecoveryCodes = object({ recovery_codes: Type.Array(Type.String(), { description: 'Ten one-time codes, shown only in this answer' }) });

export const Passkey = object({ id: Uuid, name: Type.String(), created_at: DateTime, last_used_at: nullable(DateTime) });
export const PasskeyPage = page(Passkey);
export const PasskeyEnvelope = envelope('passkey', Passkey);

/**
 * WebAuthn's own JSON (W3C), handed to navigator.credentials as it is: its main fields are
 * described, and it stays open to the fields browsers and the standard add. Its type is the
 * library's, so the handler still returns exactly what it declares.
 */
const webauthn = <T>(name: string, required: string[]) =>
  Type.Unsafe<T>({ type: 'object', required, properties: { challenge: { type: 'string' }, timeout: { type: 'integer' } }, description: `WebAuthn ${name}` });

export const RegistrationStart = object({
  options: webauthn<PublicKeyCredentialCreationOptionsJSON>('PublicKeyCredentialCreationOptionsJSON, for navigator.credentials.create()', ['rp', 'user', 'challenge', 'pubKeyCredParams']),
  challenge_token: Type.String({ description: 'Send back with the attestation to /register/finish' }),
});

export const LoginStart = object({
  options: webauthn<PublicKeyCredentialRequestOptionsJSON>('PublicKeyCredentialRequestOptionsJSON, for navigator.credentials.get()', ['challenge']),
  challenge_token: Type.String({ description: 'Send back with the assertion to /login/finish' }),
});
