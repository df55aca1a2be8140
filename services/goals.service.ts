// Goals and funnels of a site over HTTP: CRUD (editors change, viewers read), goal conversions
// and funnel steps in stats; and, as the ingest writer stores rows, each new goal conversion
// queued as a webhook event and announced once as the internal event `goal.converted`. Thin
// actions over lib/goals, lib/funnels.
import type { Context, ServiceSchema } from 'moleculer';
import { parseRange } from '../lib/analytics/range.ts';
import { type FunnelInput, createFunnel, deleteFunnel, FUNNEL_FIELDS, getFunnel, listFunnels, updateFunnel } from '../lib/funnels/funnels.ts';
import { funnelStats } from '../lib/funnels/stats.ts';
import { createConversionDetector, goalStats } from '../lib/goals/conversions.ts';
import { createGoal, deleteGoal, GOAL_FIELDS, type Goal, type GoalChanges, type GoalInput, getGoal, listGoals, siteGoals, updateGoal } from '../lib/goals/goals.ts';
import type { StoredRow } from '../lib/goals/matcher.ts';
import * as F from '../lib/funnels/responses.ts';
import * as G from '../lib/goals/responses.ts';
import { action } from '../lib/openapi/action.ts';
import { NoContent } from '../lib/openapi/responses.ts';
import { type PageQuery, pageParams } from '../lib/pagination.ts';
import type { Runtime } from '../lib/runtime.ts';
import { liveSite } from '../lib/sites/sites.ts';
import { queueOperationalEvent } from '../lib/webhooks/outbox.ts';
import type { RequestMeta } from '../types/meta.ts';

type Ctx<P = Record<string, never>> = Context<P, RequestMeta>;
type SiteParam = { id: string };
type Range = { from?: string; to?: string };

const range = { from: { type: 'string', optional: true }, to: { type: 'string', optional: true } };
/** Reading: viewers and up, signed in or with a stats:read token. */
const read = { auth: 'any' as const, access: { site: { param: 'id', role: 'viewer' as const, scope: 'stats:read' as const } } };
/** Changing: editors and up, and only a person (API tokens cannot manage goals or funnels). */
const manage = { auth: 'user' as const, access: { site: { param: 'id', role: 'editor' as const } } };
/** PATCH takes any subset of the create fields. */
const optional = <T extends Record<string, object>>(fields: T) => Object.fromEntries(Object.entries(fields).map(([k, rule]) => [k, { ...rule, optional: true }]));
const goalTags = ['goals'];
const funnelTags = ['funnels'];

export default function createGoalsService(runtime: Runtime): ServiceSchema {
  const { log } = runtime;
  const detector = createConversionDetector({ goalsOf: (siteId) => siteGoals(runtime.metadata(), siteId) });

  /** Every node's conversion detector must see the change before the next batch. */
  const goalsChanged = (ctx: Ctx<unknown>, siteId: string) => {
    detector.invalidate(siteId);
    ctx.broadcast('goals.changed', { site_id: siteId });
  };
  const announce = (ctx: Ctx<unknown>, type: 'created' | 'updated' | 'deleted', goal: Goal) =>
    ctx.emit(`ops.goal.${type}`, { site_id: goal.site_id, goal_id: goal.id, name: goal.name, type: goal.type });

  return {
    name: 'goals',
    settings: { rest: '/' },
    actions: {
      listGoals: action({
        rest: 'GET /api/sites/:id/goals',
        ...read,
        params: { id: 'uuid', ...pageParams },
        openapi: { summary: 'Goals of the site, oldest first', tags: goalTags, response: G.GoalPage },
        handler: (ctx: Ctx<SiteParam & PageQuery>) => listGoals(runtime.metadata(), ctx.params.id, ctx.params),
      }),

      // Declared before `getGoal` so "stats" is never taken for a goal id.
      goalStats: action({
        rest: 'GET /api/sites/:id/goals/stats',
        ...read,
        params: { id: 'uuid', ...range },
        openapi: {
          response: G.GoalStats,
          summary: 'Conversions per goal in a date range: unique converting visitors, matching hits/events, rate of the range’s visitors, revenue',
          tags: goalTags,
        },
        async handler(ctx: Ctx<SiteParam & Range>) {
          const site = await liveSite(runtime.sites, ctx.params.id);
          const period = parseRange(ctx.params, site.timezone);
          const goals = await siteGoals(runtime.metadata(), site.id);
          return { rows: await goalStats(runtime.analytics(), site, goals, period) };
        },
      }),

      createGoal: action({
        rest: 'POST /api/sites/:id/goals',
        location: '/api/sites/:id/goals/{goal.id}',
        ...manage,
        params: { $$strict: true, id: 'uuid', ...GOAL_FIELDS },
        openapi: { summary: 'Create an event goal (name, property conditions) or a path goal (exact or wildcard path)', tags: goalTags, successStatus: 201, response: G.GoalEnvelope, errors: [409] },
        async handler(ctx: Ctx<SiteParam & GoalInput>) {
          const { id, ...input } = ctx.params;
          const goal = await createGoal(runtime.metadata(), ctx.meta.user!, id, input);
          goalsChanged(ctx, id);
          announce(ctx, 'created', goal);
          ctx.meta.$statusCode = 201;
          return { goal };
        },
      }),

      getGoal: action({
        rest: 'GET /api/sites/:id/goals/:goalId',
        ...read,
        params: { id: 'uuid', goalId: 'uuid' },
        openapi: { summary: 'One goal of the site', tags: goalTags, response: G.GoalEnvelope },
        async handler(ctx: Ctx<SiteParam & { goalId: string }>) {
          return { goal: await getGoal(runtime.metadata(), ctx.params.id, ctx.params.goalId) };
        },
      }),

      updateGoal: action({
        rest: 'PATCH /api/sites/:id/goals/:goalId',
        ...manage,
        params: { $$strict: true, id: 'uuid', goalId: 'uuid', ...optional(GOAL_FIELDS) },
        openapi: { summary: 'Change a goal; a new type needs its own matcher; null clears revenue or property conditions', tags: goalTags, response: G.GoalEnvelope, errors: [409] },
        async handler(ctx: Ctx<SiteParam & { goalId: string } & GoalChanges>) {
          const { id, goalId, ...changes } = ctx.params;
          const { goal, changed } = await updateGoal(runtime.metadata(), ctx.meta.user!, id, goalId, changes);
          if (changed) {
            goalsChanged(ctx, id);
            announce(ctx, 'updated', goal);
          }
          return { goal };
        },
      }),

      deleteGoal: action({
        rest: 'DELETE /api/sites/:id/goals/:goalId',
        ...manage,
        params: { id: 'uuid', goalId: 'uuid' },
        openapi: { summary: 'Delete a goal (its past conversions stay in the analytics rows)', tags: goalTags, successStatus: 204, response: NoContent },
        async handler(ctx: Ctx<SiteParam & { goalId: string }>) {
          const goal = await deleteGoal(runtime.metadata(), ctx.meta.user!, ctx.params.id, ctx.params.goalId);
          goalsChanged(ctx, goal.site_id);
          announce(ctx, 'deleted', goal);
          ctx.meta.$statusCode = 204;
          return null;
        },
      }),

      listFunnels: action({
        rest: 'GET /api/sites/:id/funnels',
        ...read,
        params: { id: 'uuid', ...pageParams },
        openapi: { summary: 'Funnels of the site, oldest first', tags: funnelTags, response: F.FunnelPage },
        handler: (ctx: Ctx<SiteParam & PageQuery>) => listFunnels(runtime.metadata(), ctx.params.id, ctx.params),
      }),

      createFunnel: action({
        rest: 'POST /api/sites/:id/funnels',
        location: '/api/sites/:id/funnels/{funnel.id}',
        ...manage,
        params: { $$strict: true, id: 'uuid', ...FUNNEL_FIELDS },
        openapi: { summary: 'Create a funnel: 2–8 ordered event or path steps and a conversion window (default one day)', tags: funnelTags, successStatus: 201, response: F.FunnelEnvelope, errors: [409] },
        async handler(ctx: Ctx<SiteParam & FunnelInput>) {
          const { id, ...input } = ctx.params;
          const funnel = await createFunnel(runtime.metadata(), ctx.meta.user!, id, input);
          ctx.meta.$statusCode = 201;
          return { funnel };
        },
      }),

      getFunnel: action({
        rest: 'GET /api/sites/:id/funnels/:funnelId',
        ...read,
        params: { id: 'uuid', funnelId: 'uuid' },
        openapi: { summary: 'One funnel of the site', tags: funnelTags, response: F.FunnelEnvelope },
        async handler(ctx: Ctx<SiteParam & { funnelId: string }>) {
          return { funnel: await getFunnel(runtime.metadata(), ctx.params.id, ctx.params.funnelId) };
        },
      }),

      funnelStats: action({
        rest: 'GET /api/sites/:id/funnels/:funnelId/stats',
        ...read,
        params: { id: 'uuid', funnelId: 'uuid', ...range },
        openapi: { summary: 'Visitors per funnel step (in order, within the window), drop-off and conversion rates', tags: funnelTags, response: F.FunnelStats },
        async handler(ctx: Ctx<SiteParam & { funnelId: string } & Range>) {
          const site = await liveSite(runtime.sites, ctx.params.id);
          const funnel = await getFunnel(runtime.metadata(), site.id, ctx.params.funnelId);
          return funnelStats(runtime.analytics(), site, funnel, parseRange(ctx.params, site.timezone));
        },
      }),

      updateFunnel: action({
        rest: 'PATCH /api/sites/:id/funnels/:funnelId',
        ...manage,
        params: { $$strict: true, id: 'uuid', funnelId: 'uuid', ...optional(FUNNEL_FIELDS) },
        openapi: { summary: 'Change a funnel’s name, steps (the list replaces the old one) or window', tags: funnelTags, response: F.FunnelEnvelope, errors: [409] },
        async handler(ctx: Ctx<SiteParam & { funnelId: string } & Partial<FunnelInput>>) {
          const { id, funnelId, ...changes } = ctx.params;
          return { funnel: await updateFunnel(runtime.metadata(), ctx.meta.user!, id, funnelId, changes) };
        },
      }),

      deleteFunnel: action({
        rest: 'DELETE /api/sites/:id/funnels/:funnelId',
        ...manage,
        params: { id: 'uuid', funnelId: 'uuid' },
        openapi: { summary: 'Delete a funnel', tags: funnelTags, successStatus: 204, response: NoContent },
        async handler(ctx: Ctx<SiteParam & { funnelId: string }>) {
          await deleteFunnel(runtime.metadata(), ctx.meta.user!, ctx.params.id, ctx.params.funnelId);
          ctx.meta.$statusCode = 204;
          return null;
        },
      }),
    },

    events: {
      /**
       * The ingest writer stored a batch on this node (services/ingest.service.ts): judge it for new
       * conversions and queue their webhook events before the writer acknowledges the batch. A
       * failure is thrown back to the writer, which writes the batch again and calls again; the
       * events' ids are derived from (row, goal), so nothing is queued twice.
       */
      async 'ingest.batch.stored'(ctx: Context<{ records: readonly StoredRow[] }>) {
        const conversions = await detector.detect(ctx.params.records);
        if (conversions.length === 0) return;
        try {
          await runtime.metadata().transaction(async (tx) => {
            for (const { event_id: id, ...payload } of conversions) await queueOperationalEvent(tx, 'goal.converted', payload, id);
          });
        } catch (err) {
          detector.forget(conversions);
          log.warn({ err: (err as Error).message, conversions: conversions.length }, 'goals: could not queue goal conversions; the batch will be judged again');
          throw err;
        }
        for (const conversion of conversions) ctx.emit('goal.converted', conversion);
      },
      'goals.changed'(ctx: Context<{ site_id?: string }>) {
        detector.invalidate(ctx.params.site_id);
      },
    },
  };
}
