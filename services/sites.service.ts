// Sites over HTTP: list, read, create, change, delete; site members; moving a site to another
// team with its analytics. Thin actions over lib/sites/; who may call what is declared on each.
import type { Context, ServiceSchema } from 'moleculer';
import { SITE_ROLES, type SiteRole } from '../lib/auth/roles.ts';
import { action } from '../lib/openapi/action.ts';
import { NoContent } from '../lib/openapi/responses.ts';
import { type PageQuery, pageParams } from '../lib/pagination.ts';
import type { Runtime } from '../lib/runtime.ts';
import { extraHostnames, siteDomain, timeZone } from '../lib/sites/fields.ts';
import * as S from '../lib/sites/responses.ts';
import { listSiteMembers, removeSiteMember, setSiteMember } from '../lib/sites/members.ts';
import { createTeamSite, getSite, listSites, type SiteChanges, softDeleteSite, updateSite } from '../lib/sites/sites-admin.ts';
import { principalsChanged } from '../lib/auth/principal-cache.ts';
import { deleteSiteRows, sweepMovedSite, type TransferResult, transferSite } from '../lib/sites/transfer.ts';
import type { RequestMeta } from '../types/meta.ts';

type Ctx<P = Record<string, never>> = Context<P, RequestMeta>;

const siteFields = { timezone: timeZone(), hostnames: extraHostnames() };
const tags = ['sites'];
/**
 * Rows of a moved site can still reach its old tenant for a while: events already in the ingest
 * journal, and other nodes' site caches (30 s). One more sweep after this long moves them too.
 */
const LATE_SWEEP_MS = 60_000;
/**
 * Copying a large site takes longer than an ordinary call may, and a timed-out caller would be
 * told "failed" while the move goes on. Moleculer honours an action's `timeout` (0 = none), but
 * its ActionSchema type does not declare it, hence the spread.
 */
const NO_CALL_TIMEOUT = { timeout: 0 };

export default function createSitesService(runtime: Runtime): ServiceSchema {
  const { log } = runtime;
  const lateSweeps = new Set<NodeJS.Timeout>();

  /** Every node's site cache must forget the old answer (the ingest path resolves sites through it). */
  const sitesChanged = (ctx: Ctx<unknown>, siteId: string) => {
    runtime.sites.invalidate();
    ctx.broadcast('sites.changed', { site_id: siteId });
  };
  const announce = (ctx: Ctx<unknown>, type: 'created' | 'updated' | 'deleted', site: { id: string; domain: string; team_id: string }) =>
    ctx.emit(`ops.site.${type}`, { site_id: site.id, domain: site.domain, team_id: site.team_id });

  const scheduleLateSweep = (moved: TransferResult) => {
    const timer = setTimeout(() => {
      lateSweeps.delete(timer);
      // Inside a promise: a store asked for while the node stops throws, and must not escape a timer.
      Promise.resolve()
        .then(() => sweepMovedSite({ metadata: runtime.metadata(), analytics: runtime.analytics() }, moved))
        .then((left) => left > 0 && log.warn({ siteId: moved.site_id, left }, 'site transfer: rows still reaching the old tenant'))
        .catch((err: unknown) => log.warn({ err, siteId: moved.site_id }, 'site transfer: late sweep of the old tenant failed'));
    }, LATE_SWEEP_MS);
    timer.unref();
    lateSweeps.add(timer);
  };

  return {
    name: 'sites',
    settings: { rest: '/' },
    actions: {
      list: action({
        rest: 'GET /api/sites',
        auth: 'any',
        params: pageParams,
        openapi: { summary: 'Sites the caller can see, with the caller’s effective role on each', tags, response: S.SitePage },
        handler: (ctx: Ctx<PageQuery>) => listSites(runtime.metadata(), ctx.meta, ctx.params),
      }),

      create: action({
        rest: 'POST /api/sites',
        location: '/api/sites/{site.id}',
        auth: 'user',
        access: { team: { param: 'team_id', role: 'admin' } },
        params: { domain: siteDomain(), team_id: 'uuid', ...siteFields },
        openapi: { summary: 'Create a site in a team you administer; you become its owner', tags, successStatus: 201, response: S.SiteEnvelope, errors: [409] },
        async handler(ctx: Ctx<{ domain: string; team_id: string; timezone?: string; hostnames?: string[] }>) {
          // The tenant database first: a site never exists without a place for its analytics.
          await runtime.analytics().ensureTenant(ctx.params.team_id);
          const site = await createTeamSite(runtime.metadata(), ctx.meta.user!, { ...ctx.params, teamId: ctx.params.team_id });
          sitesChanged(ctx, site.id);
          announce(ctx, 'created', site);
          ctx.meta.$statusCode = 201;
          return { site };
        },
      }),

      get: action({
        rest: 'GET /api/sites/:id',
        auth: 'any',
        access: { site: { param: 'id', role: 'viewer', scope: 'stats:read' } },
        params: { id: 'uuid' },
        openapi: { summary: 'A site, with the caller’s effective role on it', tags, response: S.SiteEnvelope },
        async handler(ctx: Ctx<{ id: string }>) {
          return { site: await getSite(runtime.metadata(), ctx.meta, ctx.params.id) };
        },
      }),

      update: action({
        rest: 'PATCH /api/sites/:id',
        auth: 'user',
        access: { site: { param: 'id', role: 'admin' } },
        params: { id: 'uuid', domain: siteDomain({ optional: true }), ...siteFields },
        openapi: { summary: 'Change a site’s domain, time zone or extra hostnames (the list replaces the old one)', tags, response: S.SiteEnvelope, errors: [409] },
        async handler(ctx: Ctx<SiteChanges & { id: string }>) {
          const { id, ...changes } = ctx.params;
          const { site, changed } = await updateSite(runtime.metadata(), ctx.meta.user!, id, changes);
          if (changed.length > 0) {
            sitesChanged(ctx, site.id);
            announce(ctx, 'updated', site);
          }
          return { site };
        },
      }),

      remove: action({
        rest: 'DELETE /api/sites/:id',
        auth: 'user',
        access: { site: { param: 'id', role: 'owner' } },
        params: { id: 'uuid' },
        openapi: { summary: 'Delete a site and its analytics; its domain can be used again', tags, successStatus: 204, response: NoContent, errors: [409] },
        async handler(ctx: Ctx<{ id: string }>) {
          const site = await softDeleteSite(runtime.metadata(), ctx.meta.user!, ctx.params.id);
          sitesChanged(ctx, site.id);
          principalsChanged(ctx, runtime, { all_tokens: true });
          try {
            await deleteSiteRows(runtime.analytics(), site.team_id, site.id);
          } catch (err) {
            // The site is gone for good; rows left behind are unreachable (no live site reads them).
            log.warn({ err, siteId: site.id }, 'site deleted, but removing its analytics rows failed');
          }
          announce(ctx, 'deleted', site);
          ctx.meta.$statusCode = 204;
          return null;
        },
      }),

      members: action({
        rest: 'GET /api/sites/:id/members',
        auth: 'user',
        access: { site: { param: 'id', role: 'admin' } },
        params: { id: 'uuid', ...pageParams },
        openapi: { summary: 'People with a role on this site itself (team roles are listed with the team)', tags, response: S.SiteMemberPage },
        handler: (ctx: Ctx<PageQuery & { id: string }>) => listSiteMembers(runtime.metadata(), ctx.params.id, ctx.params),
      }),

      setMember: action({
        rest: 'PUT /api/sites/:id/members/:userId',
        auth: 'user',
        access: { site: { param: 'id', role: 'admin' } },
        params: { id: 'uuid', userId: 'uuid', role: { type: 'enum', values: SITE_ROLES } },
        openapi: { summary: 'Give a user a role on the site, or change it (only an owner grants owner)', tags, response: S.SiteMemberEnvelope },
        async handler(ctx: Ctx<{ id: string; userId: string; role: SiteRole }>) {
          const member = await setSiteMember(runtime.metadata(), ctx.meta.user!, ctx.params.id, ctx.params.userId, ctx.params.role);
          principalsChanged(ctx, runtime, { user_id: ctx.params.userId });
          return { member };
        },
      }),

      removeMember: action({
        rest: 'DELETE /api/sites/:id/members/:userId',
        auth: 'user',
        access: { site: { param: 'id', role: 'admin' } },
        params: { id: 'uuid', userId: 'uuid' },
        openapi: { summary: 'Take a user’s role on the site away', tags, successStatus: 204, response: NoContent },
        async handler(ctx: Ctx<{ id: string; userId: string }>) {
          await removeSiteMember(runtime.metadata(), ctx.meta.user!, ctx.params.id, ctx.params.userId);
          principalsChanged(ctx, runtime, { user_id: ctx.params.userId });
          ctx.meta.$statusCode = 204;
          return null;
        },
      }),

      transfer: action({
        rest: 'POST /api/sites/:id/transfer-team',
        auth: 'user',
        access: { site: { param: 'id', role: 'owner' } },
        params: { id: 'uuid', team_id: 'uuid' },
        ...NO_CALL_TIMEOUT,
        openapi: { summary: 'Move the site, with its analytics, into another team (needs the site’s owner role and the admin role in both teams)', tags, response: S.Transfer, errors: [409] },
        async handler(ctx: Ctx<{ id: string; team_id: string }>) {
          const deps = {
            metadata: runtime.metadata(),
            analytics: runtime.analytics(),
            log,
            sitesChanged: () => {
              sitesChanged(ctx, ctx.params.id);
              // Everyone's role on the site came from the old team; tokens must be looked at again.
              principalsChanged(ctx, runtime, { all_tokens: true });
            },
          };
          const result = await transferSite(deps, { siteId: ctx.params.id, destinationTeamId: ctx.params.team_id, actor: ctx.meta.user! });
          scheduleLateSweep(result);
          const site = await runtime.sites.byId(ctx.params.id);
          if (site) announce(ctx, 'updated', site);
          return result;
        },
      }),
    },

    events: {
      'sites.changed'() {
        runtime.sites.invalidate();
      },
    },

    stopped() {
      for (const timer of lateSweeps) clearTimeout(timer);
      lateSweeps.clear();
    },
  };
}
