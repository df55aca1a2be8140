// The webhook event catalog (README: Webhooks, Events): which types a site webhook and an
// instance webhook may subscribe to, and the `data` each type carries, built from the payload a
// change hands to the outbox (lib/webhooks/outbox.ts) or that comes with a `goal.converted`.

export type WebhookScope = 'site' | 'instance';

export interface CatalogEntry {
  type: string;
  /** 'site': site and instance webhooks may subscribe; 'instance': instance webhooks only. */
  scope: WebhookScope;
  description: string;
  /** Fields of `data`, in the order they are sent. */
  fields: readonly string[];
}

const SITE = ['site_id', 'domain', 'team_id'] as const;
const GOAL = ['site_id', 'goal_id', 'goal_name', 'goal_type'] as const;
const USER = ['user_id', 'email', 'role'] as const;
const MEMBER = ['team_id', 'user_id', 'email', 'role'] as const;

export const CATALOG: readonly CatalogEntry[] = [
  { type: 'site.updated', scope: 'site', description: 'site configuration changes', fields: SITE },
  { type: 'site.deleted', scope: 'site', description: 'a site deletion completes', fields: SITE },
  { type: 'goal.created', scope: 'site', description: 'a goal is created', fields: GOAL },
  { type: 'goal.updated', scope: 'site', description: 'a goal is updated', fields: GOAL },
  { type: 'goal.deleted', scope: 'site', description: 'a goal is deleted', fields: GOAL },
  { type: 'goal.converted', scope: 'site', description: 'a tracked pageview or custom event matches a goal', fields: [...GOAL, 'converted_at'] },
  { type: 'import.completed', scope: 'site', description: 'an analytics import completes', fields: ['site_id', 'import_id', 'source', 'rows_accepted', 'from', 'to'] },
  { type: 'import.failed', scope: 'site', description: 'an analytics import fails', fields: ['site_id', 'import_id', 'source', 'error'] },
  { type: 'webhook.test', scope: 'site', description: 'an administrator queues a test delivery', fields: ['webhook_id', 'scope', 'site_id', 'message'] },
  { type: 'site.created', scope: 'instance', description: 'a site is created', fields: SITE },
  { type: 'system.user.updated', scope: 'instance', description: 'an instance user changes', fields: USER },
  { type: 'system.user.deleted', scope: 'instance', description: 'an instance user is deleted', fields: USER },
  { type: 'team.created', scope: 'instance', description: 'a team is created', fields: ['team_id', 'name', 'owner_user_id', 'owner_email'] },
  { type: 'team.updated', scope: 'instance', description: 'team configuration changes', fields: ['team_id', 'name'] },
  { type: 'team.archived', scope: 'instance', description: 'a team is archived', fields: ['team_id', 'name', 'archived_at'] },
  { type: 'team.member.added', scope: 'instance', description: 'a member joins a team', fields: MEMBER },
  { type: 'team.member.removed', scope: 'instance', description: 'a member leaves or is removed', fields: MEMBER },
];

const BY_TYPE = new Map(CATALOG.map((entry) => [entry.type, entry]));

/**
 * The types a webhook of this scope may subscribe to: instance webhooks take every type. `added`
 * are the types a node's plugins declare, after Plumb's own.
 */
export const catalogFor = (scope: WebhookScope, added: readonly CatalogEntry[] = []): CatalogEntry[] =>
  [...CATALOG, ...added].filter((entry) => scope === 'instance' || entry.scope === 'site');

export const isKnownType = (type: string): boolean => BY_TYPE.has(type);

/** Why a type cannot be subscribed to in this scope (Plumb's types, or `added` by plugins), or null when it can. */
export function subscriptionProblem(scope: WebhookScope, type: string, added: readonly CatalogEntry[] = []): string | null {
  const entry = BY_TYPE.get(type) ?? added.find((candidate) => candidate.type === type);
  if (!entry) return `"${type}" is not an event type (GET …/webhooks/events lists them)`;
  if (scope === 'site' && entry.scope === 'instance') return `"${type}" is an instance event; only instance webhooks may subscribe to it`;
  return null;
}

/**
 * Renames that turn an internal payload into the documented `data`: goals say `name`/`type`
 * where the documented goal fields are `goal_name`/`goal_type`; a new team's first owner comes as
 * `user_id`/`email` (the payloads match the services' `ops.*` bus events).
 */
const RENAMES: Record<string, Record<string, string>> = {
  'goal.created': { name: 'goal_name', type: 'goal_type' },
  'goal.updated': { name: 'goal_name', type: 'goal_type' },
  'goal.deleted': { name: 'goal_name', type: 'goal_type' },
  'team.created': { user_id: 'owner_user_id', email: 'owner_email' },
};

export interface OperationalEvent {
  type: string;
  /** The site the event is about: site webhooks of that site receive it. Null for instance events. */
  siteId: string | null;
  data: Record<string, unknown>;
}

/**
 * The webhook event for an internal event, or null when the type is not in the catalog. `data`
 * carries exactly the catalog's fields (missing ones as null), whatever else the payload held.
 */
export function toOperationalEvent(type: string, payload: Record<string, unknown>): OperationalEvent | null {
  const entry = BY_TYPE.get(type);
  if (!entry) return null;
  const renamed: Record<string, unknown> = {};
  const renames = RENAMES[type] ?? {};
  for (const [key, value] of Object.entries(payload)) renamed[renames[key] ?? key] = value;
  const data: Record<string, unknown> = {};
  for (const field of entry.fields) data[field] = renamed[field] ?? null;
  const siteId = entry.scope === 'site' && typeof data.site_id === 'string' ? data.site_id : null;
  return { type, siteId, data };
}
