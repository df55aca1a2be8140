// The roles and scopes of Plumb's access model, and their order: who stands above whom on an
// instance, a team and a site, and what an API client may be scoped to. Values only, no checks
// (lib/auth/access.ts decides; services and responses list these values from here).

/** Instance roles, highest first. */
export const INSTANCE_ROLES = ['owner', 'admin', 'user'] as const;
export type InstanceRole = (typeof INSTANCE_ROLES)[number];

/** Team roles, highest first. */
export const TEAM_ROLES = ['owner', 'admin', 'member'] as const;
export type TeamRole = (typeof TEAM_ROLES)[number];

/** Site roles, highest first. */
export const SITE_ROLES = ['owner', 'admin', 'editor', 'viewer'] as const;
export type SiteRole = (typeof SITE_ROLES)[number];

/** What an API client's token may be used for: Plumb's own scopes. Plugins add theirs (`<plugin>:<what>`). */
export const API_SCOPES = ['stats:read', 'ingest:write', 'ai-fetch:write', 'mcp'] as const;
export type ApiScope = (typeof API_SCOPES)[number] | `${string}:${string}`;

/** A scope as the API-client form shows it. */
export interface ScopeInfo {
  name: string;
  description: string;
}

export const CORE_SCOPES: readonly ScopeInfo[] = [
  { name: 'stats:read', description: 'Read statistics, events, goals and funnels of the token’s sites' },
  { name: 'ingest:write', description: 'Send server-side pageviews and events' },
  { name: 'ai-fetch:write', description: 'Forward AI crawler fetches from server logs' },
  { name: 'mcp', description: 'Use the MCP server' },
];

/** Higher rank, more rights: a rule asking for a role is met by that role or a higher one. */
export const INSTANCE_RANK: Record<InstanceRole, number> = { user: 1, admin: 2, owner: 3 };
export const TEAM_RANK: Record<TeamRole, number> = { member: 1, admin: 2, owner: 3 };
export const SITE_RANK: Record<SiteRole, number> = { viewer: 1, editor: 2, admin: 3, owner: 4 };
