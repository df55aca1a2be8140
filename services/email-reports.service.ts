// Scheduled email reports: a signed-in person's subscriptions (/api/user/email-reports), their
// weekly/monthly/off choice for a site (/api/sites/:id/email-report), and the one-click
// unsubscribe link every report carries (/api/email-reports/unsubscribe, no session). The
// leader job that queues the reports is lib/email-reports/job.ts. Thin actions over lib/email-reports.
import type { Context, ServiceSchema } from 'moleculer';
import * as R from '../lib/email-reports/responses.ts';
import { FREQUENCIES, type Frequency } from '../lib/email-reports/period.ts';
import { listSubscriptions, setSubscription, tokenState, unsubscribeWithToken } from '../lib/email-reports/subscriptions.ts';
import { unauthorized } from '../lib/errors.ts';
import { mailConfigured } from '../lib/mail/transport.ts';
import { action } from '../lib/openapi/action.ts';
import { type PageQuery, pageParams } from '../lib/pagination.ts';
import type { Runtime } from '../lib/runtime.ts';
import type { RequestMeta } from '../types/meta.ts';
import { notConfigured } from './mail.service.ts';

type Ctx<P> = Context<P, RequestMeta>;
const tags = ['account'];
const token = { token: 'string|min:1|max:200' };

export default function createEmailReportsService(runtime: Runtime): ServiceSchema {
  const db = () => runtime.metadata();
  const caller = (ctx: Ctx<unknown>) => {
    if (!ctx.meta.user) throw unauthorized();
    return ctx.meta.user;
  };

  return {
    name: 'emailReports',
    settings: { rest: '/' },
    actions: {
      list: action({
        rest: 'GET /api/user/email-reports',
        auth: 'user',
        params: { ...pageParams },
        openapi: { summary: 'The caller’s scheduled email reports, one per site they still can see, by site domain', tags, response: R.SubscriptionPage },
        handler: (ctx: Ctx<PageQuery>) => listSubscriptions(db(), caller(ctx), ctx.params),
      }),

      choose: action({
        rest: 'PUT /api/sites/:id/email-report',
        auth: 'user',
        access: { site: { param: 'id', role: 'viewer' } },
        params: { $$strict: true, id: 'uuid', frequency: { type: 'enum', values: [...FREQUENCIES, 'off'] } },
        openapi: {
          summary: 'Subscribe the caller to a weekly or monthly email report of the site, or turn it off; 409 without an SMTP server (turning it off always works)',
          tags,
          response: R.Choice,
          errors: [409],
        },
        async handler(ctx: Ctx<{ id: string; frequency: Frequency | 'off' }>) {
          if (ctx.params.frequency !== 'off' && !mailConfigured(runtime.config)) throw notConfigured();
          return setSubscription(db(), caller(ctx).id, ctx.params.id, ctx.params.frequency);
        },
      }),

      tokenState: action({
        rest: 'GET /api/email-reports/unsubscribe',
        auth: 'none',
        params: { $$strict: true, ...token },
        openapi: {
          summary: 'What the unsubscribe link of a report names: its site and frequency while the subscription lasts. Changes nothing; POST to the same URL unsubscribes',
          tags,
          response: R.TokenState,
          errors: [404],
        },
        handler: (ctx: Ctx<{ token: string }>) => tokenState(db(), runtime.jwtSecret, ctx.params.token),
      }),

      unsubscribe: action({
        rest: 'POST /api/email-reports/unsubscribe',
        auth: 'none',
        formBody: true,
        bodyLimit: 4096,
        params: { $$strict: true, ...token },
        openapi: {
          summary: 'One-click unsubscribe (RFC 8058): ends the subscription the token names, no session needed; the same answer when it has already ended',
          tags,
          response: R.Unsubscribed,
          errors: [404],
        },
        handler: (ctx: Ctx<{ token: string }>) => unsubscribeWithToken(db(), runtime.jwtSecret, ctx.params.token),
      }),
    },
  };
}
