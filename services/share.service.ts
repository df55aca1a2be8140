// Share links over HTTP: owners and admins create, list and revoke them under /api/sites/{id}/share;
// anyone holding a link reads that one site's analytics under /api/share/{token}/…, which forward
// to the site's own read actions as a viewer of that site and nothing more (lib/auth/access.ts).
import type { Context, ServiceSchema } from 'moleculer';
import type { AuthMeta } from '../lib/auth/access.ts';
import * as E from '../lib/analytics/events/responses.ts';
import * as S from '../lib/analytics/query/responses.ts';
import { Ok } from '../lib/auth/responses.ts';
import * as G from '../lib/goals/responses.ts';
import { action } from '../lib/openapi/action.ts';
import { NoContent, type TSchema } from '../lib/openapi/responses.ts';
import { type PageQuery, pageParams } from '../lib/pagination.ts';
import type { Runtime } from '../lib/runtime.ts';
import * as H from '../lib/share/responses.ts';
import { MAX_EMBED_ORIGINS } from '../lib/share/embedding.ts';
import { createShareLink, listShareLinks, type ResolvedShare, resolveShareToken, revokeShareLink, type ShareChanges, type ShareInput, updateShareLink } from '../lib/share/links.ts';
import { assertUnlocked, unlockCookie, unlockShare } from '../lib/share/unlock.ts';
import type { RequestMeta } from '../types/meta.ts';

type Ctx<P> = Context<P, RequestMeta & Pick<AuthMeta, 'share'>>;
type TokenParams = { token: string } & Record<string, unknown>;

const tags = ['share links'];
const token = { type: 'string', min: 1, max: 128 };
/** Checked item by item in lib/share/embedding.ts, so every bad origin is named at once. */
const embedOrigins = { type: 'array', items: { type: 'string', max: 2048 }, max: MAX_EMBED_ORIGINS, optional: true };

/**
 * The read endpoints a share link opens: its path under /api/share/{token} → the action that
 * answers the same question under /api/sites/{id}. Nothing else of the site is reachable.
 */
const READS: Record<string, { path: string; action: string; summary: string; response: TSchema; paged?: boolean }> = {
  stats: { path: '/stats', action: 'analytics.stats', summary: 'KPIs (with comparison) and timeseries of the shared site', response: S.Stats },
  kpis: { path: '/stats/kpis', action: 'analytics.kpis', summary: 'KPIs (with comparison) of the shared site, without the timeseries', response: S.KpisOnly },
  timeseries: { path: '/stats/timeseries', action: 'analytics.timeseries', summary: 'Visitors, visits and pageviews over time on the shared site', response: S.Timeseries },
  breakdown: { path: '/stats/breakdown', action: 'analytics.breakdown', summary: 'A breakdown (pages, sources, countries …) of the shared site', response: S.Breakdown, paged: true },
  eventNames: { path: '/events/names', action: 'events.names', summary: 'Custom event names of the shared site', response: E.EventNames },
  eventProperties: { path: '/events/properties', action: 'events.properties', summary: 'Property keys of one custom event of the shared site', response: E.EventProperties },
  eventBreakdown: { path: '/events/breakdown', action: 'events.breakdown', summary: 'Values of one event property of the shared site', response: E.EventBreakdown },
  eventTimeseries: { path: '/events/timeseries', action: 'events.timeseries', summary: 'One custom event over time on the shared site', response: E.EventTimeseries },
  eventAudience: { path: '/events/audience', action: 'events.audience', summary: 'Who triggered one custom event on the shared site', response: E.EventAudience },
  goalStats: { path: '/goals/stats', action: 'goals.goalStats', summary: 'Goal conversions of the shared site', response: G.GoalStats },
};

export default function createShareService(runtime: Runtime): ServiceSchema {
  const { config } = runtime;
  const secureCookies = config.publicUrl.startsWith('https:');

  /** The link behind the request's token, unlocked: 404 when gone, 401 when its password is still owed. */
  async function openShare(ctx: Ctx<TokenParams>): Promise<ResolvedShare> {
    const share = await resolveShareToken(runtime.metadata(), ctx.params.token);
    const cookie = ctx.meta.request?.headers.cookie;
    await assertUnlocked(runtime.sessions, share, Array.isArray(cookie) ? cookie.join('; ') : cookie);
    return share;
  }

  const readAction = (read: (typeof READS)[string]) =>
    action({
      rest: `GET /api/share/:token${read.path}`,
      auth: 'none' as const,
      params: read.paged ? { token, ...pageParams } : { token },
      openapi: {
        summary: read.summary,
        description: `Public, read-only: the query parameters of the site's own endpoint (${read.action}); the site is always the link's own.`,
        tags,
        // The site endpoint answers, so its schema is the answer's.
        response: read.response,
      },
      async handler(ctx: Ctx<TokenParams>) {
        const share = await openShare(ctx);
        // Path and query arrive merged: drop the token, and whatever site id the query names.
        const { token: _token, id: _id, ...query } = ctx.params;
        // The link's visitor acts as the share principal alone: whoever else the request may be
        // signed in as must not widen (or narrow) what the link shows.
        return ctx.call(read.action, { ...query, id: share.site.id }, { meta: { user: undefined, session: undefined, apiClient: undefined, share: { siteId: share.site.id } } });
      },
    });

  return {
    name: 'share',
    settings: { rest: '/' },
    actions: {
      create: action({
        rest: 'POST /api/sites/:id/share',
        location: '/api/sites/:id/share/{share.id}',
        auth: 'user',
        access: { site: { param: 'id', role: 'admin' } },
        params: {
          id: 'uuid',
          name: { type: 'string', max: 120, optional: true, nullable: true },
          expires_at: { type: 'string', max: 64, optional: true, nullable: true },
          password: { type: 'string', max: 256, optional: true, nullable: true },
          embed_origins: embedOrigins,
        },
        openapi: { summary: 'Create a read-only share link of the site (optional expiry, password and sites allowed to embed it); the token is shown only here', tags, successStatus: 201, response: H.CreatedShare },
        async handler(ctx: Ctx<ShareInput & { id: string }>) {
          const { id, ...input } = ctx.params;
          const created = await createShareLink(runtime.metadata(), ctx.meta.user!, id, input, config.publicUrl);
          ctx.meta.$statusCode = 201;
          ctx.meta.$responseHeaders = { 'Cache-Control': 'no-store' };
          return created;
        },
      }),

      list: action({
        rest: 'GET /api/sites/:id/share',
        auth: 'user',
        access: { site: { param: 'id', role: 'admin' } },
        params: { id: 'uuid', ...pageParams },
        openapi: { summary: 'The site’s share links that were not revoked, newest first (tokens are never shown again)', tags, response: H.SharePage },
        handler: (ctx: Ctx<PageQuery & { id: string }>) => listShareLinks(runtime.metadata(), ctx.params.id, ctx.params),
      }),

      update: action({
        rest: 'PATCH /api/sites/:id/share/:shareId',
        auth: 'user',
        access: { site: { param: 'id', role: 'admin' } },
        params: { id: 'uuid', shareId: 'uuid', name: { type: 'string', max: 120, optional: true, nullable: true }, embed_origins: embedOrigins },
        openapi: {
          summary: 'Rename a share link or set the sites allowed to embed its page in a frame (none by default)',
          description: 'embed_origins lists origins such as https://blog.example.com; they become the share page’s frame-ancestors. An empty list stops all embedding.',
          tags,
          response: H.ShareLink,
        },
        async handler(ctx: Ctx<ShareChanges & { id: string; shareId: string }>) {
          const { id, shareId, ...changes } = ctx.params;
          return updateShareLink(runtime.metadata(), ctx.meta.user!, id, shareId, changes);
        },
      }),

      revoke: action({
        rest: 'DELETE /api/sites/:id/share/:shareId',
        auth: 'user',
        access: { site: { param: 'id', role: 'admin' } },
        params: { id: 'uuid', shareId: 'uuid' },
        openapi: { summary: 'Revoke a share link: its URL answers 404 from now on', tags, successStatus: 204, response: NoContent },
        async handler(ctx: Ctx<{ id: string; shareId: string }>) {
          await revokeShareLink(runtime.metadata(), ctx.meta.user!, ctx.params.id, ctx.params.shareId);
          ctx.meta.$statusCode = 204;
          return null;
        },
      }),

      view: action({
        rest: 'GET /api/share/:token',
        auth: 'none',
        params: { token },
        openapi: { summary: 'What a share link shows: the site and the link’s name (401 password_required until unlocked)', tags, response: H.SharedSite },
        async handler(ctx: Ctx<TokenParams>) {
          const share = await openShare(ctx);
          return { site: share.site, name: share.name, has_password: share.passwordHash !== null };
        },
      }),

      unlock: action({
        rest: 'POST /api/share/:token/unlock',
        auth: 'none',
        rateLimit: 'login',
        params: { token, password: { type: 'string', min: 1, max: 256 } },
        openapi: { summary: 'Unlock a password-protected share link for a day (sets an HttpOnly cookie for this link only)', tags, response: Ok },
        async handler(ctx: Ctx<TokenParams & { password: string }>) {
          const share = await resolveShareToken(runtime.metadata(), ctx.params.token);
          await unlockShare(share, ctx.params.password);
          const headers: Record<string, string | string[]> = { 'Cache-Control': 'no-store' };
          if (share.passwordHash) headers['Set-Cookie'] = [await unlockCookie(runtime.sessions, share, ctx.params.token, secureCookies)];
          ctx.meta.$responseHeaders = headers;
          return { status: 'ok' as const };
        },
      }),

      ...Object.fromEntries(Object.entries(READS).map(([name, read]) => [name, readAction(read)])),
    },
  };
}
