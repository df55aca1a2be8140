// Who may call what. Actions declare it (`auth`, `access`); one Moleculer middleware enforces it
// for every call that came in over HTTP, so no handler carries its own checks.
//
// Effective site role: instance owner → owner and instance admin → admin on every site; otherwise
// the higher of the site membership and the role from the site's team (team owner → owner, team
// admin → admin, team member → viewer). An API client acts with the lower of its own role on the
// site and its owner's (lowered once, when the token is verified) and only within its scopes.
import type { Context, Middleware } from 'moleculer';
import { type FieldError, forbidden, notFound, PlumbError, unauthorized, validationFailed } from '../errors.ts';
import type { MetadataQueryable } from '../stores/metadata/index.ts';
import { compileChecker } from '../validation.ts';
import type { ApiClientPrincipal } from './api-clients.ts';
import { type ApiScope, INSTANCE_RANK, SITE_RANK, type SiteRole, TEAM_RANK, type TeamRole } from './roles.ts';
import type { SessionInfo, UserPrincipal } from './sessions.ts';

export type AuthMode = 'none' | 'user' | 'client' | 'any';

export interface AccessRule {
  /** The instance role required (owner > admin > user). */
  instance?: 'admin' | 'owner';
  /** The site named by this param must be reachable with at least this role. */
  site?: { param: string; role: SiteRole; scope?: ApiScope };
  /** The team named by this param must be reachable with at least this role. */
  team?: { param: string; role: TeamRole };
}

/**
 * A share link's visitor (set by the share service when it forwards a read, never by the gateway):
 * a viewer of this one site, with no person, token, instance or team rights behind it.
 */
export interface SharePrincipal {
  siteId: string;
}

/** What authentication leaves in ctx.meta (set by the gateway). */
export interface AuthMeta {
  request?: unknown;
  user?: UserPrincipal;
  session?: SessionInfo;
  apiClient?: ApiClientPrincipal;
  share?: SharePrincipal;
}

const TEAM_TO_SITE: Record<TeamRole, SiteRole> = { owner: 'owner', admin: 'admin', member: 'viewer' };

const higher = (a: SiteRole | null, b: SiteRole | null): SiteRole | null => (!a ? b : !b ? a : SITE_RANK[a] >= SITE_RANK[b] ? a : b);

/** The user's role on a live site, or null when they have none (or the site does not exist). */
export async function siteRoleOf(db: MetadataQueryable, user: Pick<UserPrincipal, 'id' | 'role'>, siteId: string): Promise<SiteRole | null> {
  const { rows } = await db.query<{ site_role: SiteRole | null; team_role: TeamRole | null }>(
    `SELECT sm.role AS site_role, tm.role AS team_role
       FROM sites s
       LEFT JOIN site_members sm ON sm.site_id = s.id AND sm.user_id = $2
       LEFT JOIN team_members tm ON tm.team_id = s.team_id AND tm.user_id = $2
      WHERE s.id = $1 AND s.deleted_at IS NULL`,
    [siteId, user.id],
  );
  if (!rows[0]) return null;
  if (user.role === 'owner') return 'owner';
  const fromInstance: SiteRole | null = user.role === 'admin' ? 'admin' : null;
  const fromTeam = rows[0].team_role ? TEAM_TO_SITE[rows[0].team_role] : null;
  return higher(higher(fromInstance, rows[0].site_role), fromTeam);
}

/** The user's role in a live team, or null. Instance owners and admins administer every team. */
export async function teamRoleOf(db: MetadataQueryable, user: Pick<UserPrincipal, 'id' | 'role'>, teamId: string): Promise<TeamRole | null> {
  const { rows } = await db.query<{ role: TeamRole | null }>(
    'SELECT tm.role FROM teams t LEFT JOIN team_members tm ON tm.team_id = t.id AND tm.user_id = $2 WHERE t.id = $1',
    [teamId, user.id],
  );
  if (!rows[0]) return null;
  if (user.role === 'owner') return 'owner';
  const member = rows[0].role;
  if (user.role === 'admin') return member === 'owner' ? 'owner' : 'admin';
  return member;
}


const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The id a rule names; access runs before parameter validation, so a malformed one stops here. */
function idParam(params: Record<string, unknown>, name: string): string {
  const value = params[name];
  if (typeof value !== 'string' || !UUID.test(value)) throw validationFailed([{ field: name, message: `${name} must be a UUID`, type: 'uuid' }]);
  return value;
}

/** The schema's problems, and those the access check found that the schema does not name. */
function withEvery(found: readonly FieldError[], schema: readonly FieldError[]): FieldError[] {
  const named = new Set(schema.map((f) => f.field));
  return [...found.filter((f) => !named.has(f.field)), ...schema];
}

/**
 * A share link reaches only actions that read one site (a `site` rule needing no more than
 * viewer), and only its own site there; everything else is refused, whoever else is in meta.
 */
function enforceShare(share: SharePrincipal, mode: AuthMode, rule: AccessRule | undefined, params: Record<string, unknown>): void {
  if (mode === 'user' || mode === 'client' || !rule?.site || rule.instance || rule.team) throw forbidden('A share link can only read its own site');
  if (idParam(params, rule.site.param) !== share.siteId) throw notFound('Site not found');
  if (SITE_RANK[rule.site.role] > SITE_RANK.viewer) throw forbidden('A share link can only read its own site');
}

/** Throws the right error unless the caller meets the rule. */
export async function enforce(db: MetadataQueryable, meta: AuthMeta, mode: AuthMode, rule: AccessRule | undefined, params: Record<string, unknown>): Promise<void> {
  if (mode === 'none') return;
  if (meta.share) return enforceShare(meta.share, mode, rule, params);
  const { user, apiClient } = meta;
  if (mode === 'user' && !user) throw apiClient ? forbidden('This action needs a signed-in user; API tokens cannot perform it') : unauthorized();
  if (mode === 'client' && !apiClient) throw unauthorized('An API-client bearer token is required');
  if (!user && !apiClient) throw unauthorized();
  if (!rule) return;
  if (rule.instance) {
    if (!user || apiClient) throw forbidden('Only instance administrators can do this');
    if (INSTANCE_RANK[user.role] < INSTANCE_RANK[rule.instance]) throw forbidden(`Only instance ${rule.instance === 'owner' ? 'owners' : 'administrators'} can do this`);
  }
  if (rule.site) {
    const siteId = idParam(params, rule.site.param);
    let role: SiteRole | null;
    if (apiClient) {
      if (rule.site.scope && !apiClient.scopes.includes(rule.site.scope)) throw forbidden(`This token lacks the ${rule.site.scope} scope`);
      // The verifier already lowered each of the token's site roles to its owner's current role.
      role = Object.hasOwn(apiClient.sites, siteId) ? apiClient.sites[siteId] : null;
    } else {
      role = await siteRoleOf(db, user!, siteId);
    }
    if (!role) throw notFound('Site not found');
    if (SITE_RANK[role] < SITE_RANK[rule.site.role]) throw forbidden(`This needs the ${rule.site.role} role on the site`);
  }
  if (rule.team) {
    if (!user || apiClient) throw forbidden('Team management needs a signed-in user');
    const role = await teamRoleOf(db, user, idParam(params, rule.team.param));
    if (!role) throw notFound('Team not found');
    if (TEAM_RANK[role] < TEAM_RANK[rule.team.role]) throw forbidden(`You must be a team ${rule.team.role} to do this`);
  }
}

/** The routes an action's `rest` declares, in any of the forms Moleculer accepts ("GET /x", {method, path}, or a list of them). */
export function declaredRoutes(rest: unknown): string[] {
  return [rest ?? []].flat().flatMap((route) => {
    if (typeof route === 'string') return [route];
    if (route && typeof route === 'object') {
      const { method, path } = route as { method?: unknown; path?: unknown };
      return [`${typeof method === 'string' ? method : '*'} ${typeof path === 'string' ? path : ''}`.trim()];
    }
    return route === true ? ['(automatic route)'] : [];
  });
}

/** The auth an HTTP action declared; assertDeclaresAccess made sure, at start, that it declared one. */
export function authModeOf(action: { auth?: AuthMode; rest?: unknown }): AuthMode {
  return action.auth ?? (declaredRoutes(action.rest).length > 0 ? 'user' : 'none');
}

const AUTH_MODES: readonly AuthMode[] = ['none', 'user', 'client', 'any'];

/**
 * Refuses, naming the action, an HTTP action that does not say who may call it: every route
 * declares `auth`, and one under a site or a team (`/sites/:id…`, `/teams/:id…`) also the `access`
 * rule that guards it. Nothing is public, or open to any signed-in person, by omission.
 */
export function assertDeclaresAccess(name: string, action: { auth?: unknown; access?: AccessRule; rest?: unknown }): void {
  const routes = declaredRoutes(action.rest);
  if (routes.length === 0) return;
  const where = `HTTP action ${name} (${routes.join(', ')})`;
  if (!AUTH_MODES.includes(action.auth as AuthMode)) throw new Error(`${where} must declare auth (${AUTH_MODES.join(', ')}): who may call it is never left to a default`);
  if (action.auth === 'none') return;
  const access = action.access ?? {};
  for (const route of routes) {
    if (/\/sites\/:/.test(route) && !access.site && !access.instance) throw new Error(`${where} acts on a site and must declare access.site (or access.instance)`);
    if (/\/teams\/:/.test(route) && !access.team && !access.instance) throw new Error(`${where} acts on a team and must declare access.team (or access.instance)`);
  }
}

/**
 * The access middleware. An HTTP action that does not declare its access cannot be registered (the
 * node refuses to start, naming it); calls that came in over HTTP (the gateway sets meta.request)
 * must meet their action's `auth` and `access`.
 */
export function accessMiddleware(db: () => MetadataQueryable): Middleware {
  return {
    name: 'Access',
    localAction(handler: (ctx: Context) => unknown, action: { name?: string; auth?: AuthMode; access?: AccessRule; rest?: unknown; params?: Record<string, unknown> }) {
      if (declaredRoutes(action.rest).length === 0) return handler;
      assertDeclaresAccess(action.name ?? '(unnamed)', action);
      const mode = authModeOf(action);
      if (mode === 'none' && !action.access) return handler;
      let checkParams: ((value: unknown) => FieldError[]) | undefined;
      return async function checked(this: unknown, ctx: Context) {
        const meta = ctx.meta as AuthMeta;
        if (meta.request !== undefined) {
          try {
            await enforce(db(), meta, mode, action.access, ctx.params as Record<string, unknown>);
          } catch (err) {
            // A malformed id names no resource to guard, so the caller hears of every bad field at once.
            if (!(err instanceof PlumbError) || err.type !== 'validation_failed' || !action.params) throw err;
            checkParams ??= compileChecker(action.params);
            throw validationFailed(withEvery((err.data as { fields: FieldError[] }).fields, checkParams(ctx.params)));
          }
        }
        return handler.call(this, ctx);
      };
    },
  } as Middleware;
}
