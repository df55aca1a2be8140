// Response schemas of the account routes (services/users.service.ts): instance users, the
// caller's own account and API clients, published in the OpenAPI document and typing the handlers.
import { Type } from '@sinclair/typebox';
import { API_SCOPES } from '../auth/roles.ts';
import { UserPrincipal } from '../auth/responses.ts';
import { DateTime, envelope, nullable, object, page, Uuid } from '../openapi/responses.ts';
import { SiteRole } from '../sites/responses.ts';

export const Me = UserPrincipal;

export const User = object({
  id: Uuid,
  email: Type.String(),
  role: UserPrincipal.properties.role,
  totp_enabled: Type.Boolean(),
  created_at: DateTime,
});
export const UserPage = page(User);
export const UserEnvelope = envelope('user', User);

/** Stored as text; the API only ever writes these values (the JSON Schema says so, the type stays string). */
/** Plumb's own scopes, or a plugin's `<plugin>:<what>` (GET /api/user/api-clients/scopes lists a node's). */
const Scope = Type.String({ description: `One of ${API_SCOPES.join(', ')}, or a scope an enabled plugin declares (<plugin>:<what>)` });
export const ScopeList = object({ scopes: Type.Array(object({ name: Type.String(), description: Type.String() })) });

export const ApiClient = object(
  {
    id: Uuid,
    name: Type.String(),
    scopes: Type.Array(Scope),
    sites: Type.Array(object({ site_id: Uuid, role: SiteRole })),
    expires_at: nullable(DateTime),
    created_at: DateTime,
    last_used_at: nullable(DateTime),
  },
  { description: 'An API client as its owner sees it: never its token' },
);
export const ApiClientPage = page(ApiClient);

/** A new token: shown in this answer only. */
export const IssuedApiClient = object({ api_client: ApiClient, token: Type.String({ description: 'Shown once; send as Authorization: Bearer or X-API-Key' }) });
