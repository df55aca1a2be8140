// Response schema of the team audit page (GET /api/user/teams/:id/audit, services/teams.service.ts):
// the spec's entry fields, plus the site and the object an entry concerned, named as they were
// when it was written (lib/audit/audit.ts).
import { Type } from '@sinclair/typebox';
import { DateTime, nullable, object, stringEnum, Uuid } from '../openapi/responses.ts';

export const AuditSite = object({ id: Uuid, domain: Type.String() }, { description: 'The site of a site-level action, with its domain at the time' });

export const AuditSubject = object(
  {
    type: stringEnum(['goal', 'funnel', 'share_link', 'webhook', 'team']),
    id: Uuid,
    name: nullable(Type.String({ description: 'Its name at the time; null for a share link without one' })),
  },
  { description: 'What the action was done to, besides a site and a person (for a site moved between teams: the other team)' },
);

export const AuditEntry = object({
  id: Uuid,
  team_id: Uuid,
  action: Type.String(),
  actor_user_id: nullable(Uuid),
  actor_email: nullable(Type.String()),
  target_user_id: nullable(Uuid),
  target_email: nullable(Type.String()),
  site: nullable(AuditSite),
  subject: nullable(AuditSubject),
  details: Type.String({ description: 'What happened, in words that name things by their names (no ids)' }),
  created_at: DateTime,
});

export const AuditPage = object({
  action: Type.String({ description: 'The action filter applied; empty for none' }),
  entries: Type.Array(AuditEntry),
  has_more: Type.Boolean(),
  limit: Type.Integer(),
  offset: Type.Integer(),
  total: Type.Integer(),
});
