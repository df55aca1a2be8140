// The services every Plumb node runs, in one list so the node and the tests start the same set,
// and the core leader jobs, which the node registers once (lib/node.ts), never a service.
import type { ServiceSchema } from 'moleculer';
import type { LeaderJob } from '../cluster/leader-jobs.ts';
import { dailyBreakdownsJob } from '../lib/analytics/daily-breakdowns.ts';
import { emailReportsJob } from '../lib/email-reports/job.ts';
import { ingestPruneJob } from '../lib/ingest/prune-job.ts';
import type { Runtime } from '../lib/runtime.ts';
import createAnalyticsService from './analytics.service.ts';
import createApiService from './api.service.ts';
import createAuthService from './auth.service.ts';
import createClusterService from './cluster.service.ts';
import createEmailReportsService from './email-reports.service.ts';
import createEventsService from './events.service.ts';
import createExportsService from './exports.service.ts';
import createFaviconService from './favicon.service.ts';
import createGoalsService from './goals.service.ts';
import createImportsService from './imports.service.ts';
import createIngestService from './ingest.service.ts';
import createMailService from './mail.service.ts';
import createMcpService from './mcp.service.ts';
import createNodeService from './node.service.ts';
import createSecurityService from './security.service.ts';
import createShareService from './share.service.ts';
import createSocialService from './social.service.ts';
import createSsoService from './sso.service.ts';
import createSitesService from './sites.service.ts';
import createTeamsService from './teams.service.ts';
import createUsersService from './users.service.ts';
import createWebhooksService from './webhooks.service.ts';

export const SERVICE_FACTORIES: readonly ((runtime: Runtime) => ServiceSchema)[] = [
  createApiService,
  createNodeService,
  createClusterService,
  createIngestService,
  createAuthService,
  createSecurityService,
  createSocialService,
  createSsoService,
  createUsersService,
  createTeamsService,
  createSitesService,
  createAnalyticsService,
  createEventsService,
  createMcpService,
  createExportsService,
  createGoalsService,
  createImportsService,
  createShareService,
  createFaviconService,
  createWebhooksService,
  createMailService,
  createEmailReportsService,
];

/** Leader-only work of the core services. A service whose instance does the work plugs it into a slot the runtime holds. */
export const LEADER_JOB_FACTORIES: readonly { name: string; create(runtime: Runtime): LeaderJob }[] = [
  { name: 'ingest.prune', create: ingestPruneJob },
  { name: 'webhooks.dispatcher', create: (runtime) => runtime.webhookDispatch.job },
  { name: 'mail.dispatcher', create: (runtime) => runtime.mailDispatch.job },
  { name: 'imports.runner', create: (runtime) => runtime.importRunner.job },
  { name: 'email-reports.scheduler', create: emailReportsJob },
  { name: 'analytics.daily-breakdowns', create: dailyBreakdownsJob },
];
