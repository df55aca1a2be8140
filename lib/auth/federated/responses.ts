// Response schemas of sign-in through other providers and of team single sign-on
// (services/social.service.ts, services/sso.service.ts).
import { Type } from '@sinclair/typebox';
import { DateTime, nullable, object, stringEnum } from '../../openapi/responses.ts';
import { PROVIDER_IDS } from './providers.ts';

const ProviderId = stringEnum(PROVIDER_IDS);

export const SignInOptions = object({
  providers: Type.Array(object({ id: ProviderId, name: Type.String() }), { description: 'The providers this instance enabled, in button order' }),
  sso: Type.Boolean({ description: 'At least one team signs in through single sign-on' }),
});

export const AuthorizationRedirect = object({ authorization_url: Type.String({ description: "Send the browser here: the provider's sign-in page" }) });

export const Identity = object({ email: Type.String({ description: 'The verified address the provider gave when it was linked' }), created_at: DateTime, last_used_at: nullable(DateTime) });

export const LinkedProviders = object({
  providers: Type.Array(object({ id: ProviderId, name: Type.String(), enabled: Type.Boolean(), identity: nullable(Identity) }), {
    description: 'Every provider that is enabled or linked; identity is null when not linked',
  }),
});

export const SsoConnection = object({
  issuer: Type.String(),
  client_id: Type.String(),
  client_secret_set: Type.Boolean({ description: 'The secret is stored; it is never returned' }),
  allowed_domains: Type.Array(Type.String()),
  jit_enabled: Type.Boolean({ description: 'Addresses without an account join the team as members at their first sign-in' }),
  updated_at: DateTime,
});

export const SsoEnvelope = object({ sso: nullable(SsoConnection) });

export const SsoTestResult = object({
  ok: Type.Boolean(),
  issuer: Type.String(),
  message: Type.String({ description: 'What was found, or why the discovery document cannot be used' }),
  authorization_endpoint: nullable(Type.String()),
  token_endpoint: nullable(Type.String()),
});
