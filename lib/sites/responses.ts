// Response schemas of the sites routes (services/sites.service.ts): published in the OpenAPI
// document and the types the handlers must return.
import { Type } from '@sinclair/typebox';
import { SITE_ROLES } from '../auth/roles.ts';
import { DateTime, envelope, object, page, stringEnum, Uuid } from '../openapi/responses.ts';

export const SiteRole = stringEnum(SITE_ROLES);

export const Site = object({
  id: Uuid,
  team_id: Uuid,
  domain: Type.String(),
  timezone: Type.String({ description: 'IANA time zone in which the site’s days are counted' }),
  hostnames: Type.Array(Type.String(), { description: 'Further hostnames the site accepts traffic from, sorted' }),
  created_at: DateTime,
  role: { ...SiteRole, description: 'The caller’s effective role on the site' },
});

export const SitePage = page(Site);
export const SiteEnvelope = envelope('site', Site);

export const SiteMember = object({ user_id: Uuid, email: Type.String(), role: SiteRole });
export const SiteMemberPage = page(SiteMember);
export const SiteMemberEnvelope = envelope('member', SiteMember);

export const Transfer = object({
  site_id: Uuid,
  source_team_id: Uuid,
  destination_team_id: Uuid,
  status: stringEnum(['completed', 'cleanup_pending'], { description: 'cleanup_pending: moved, but rows left in the old team are removed later' }),
});
