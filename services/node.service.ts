// Health of this node: liveness, readiness (503 until the stores are open), and instance status.
import { Type } from '@sinclair/typebox';
import type { ServiceSchema } from 'moleculer';
import { VERSION } from '../lib/brand.ts';
import { unavailable } from '../lib/errors.ts';
import { action } from '../lib/openapi/action.ts';
import { object } from '../lib/openapi/responses.ts';
import { mailConfigured } from '../lib/mail/transport.ts';
import type { Runtime } from '../lib/runtime.ts';
import { userCount } from '../lib/users/users.ts';

export default function createNodeService(runtime: Runtime): ServiceSchema {
  return {
    name: 'node',
    settings: { rest: '/' },
    actions: {
      health: action({
        rest: 'GET /healthz',
        auth: 'none',
        openapi: { summary: 'Liveness: the process answers', tags: ['node'], response: object({ status: Type.Literal('ok') }) },
        handler: () => ({ status: 'ok' as const }),
      }),
      ready: action({
        rest: 'GET /readyz',
        auth: 'none',
        openapi: { summary: 'Readiness: 200 once the metadata and analytics stores are open, 503 before and while stopping', tags: ['node'], response: object({ status: Type.Literal('ready'), leader: Type.Boolean() }) },
        async handler() {
          if (!runtime.isReady()) throw unavailable('Stores are not ready', 1);
          await Promise.all([runtime.metadata().ping(), runtime.analytics().ping()]);
          return { status: 'ready' as const, leader: runtime.elector.isLeader() };
        },
      }),
      status: action({
        rest: 'GET /api/status',
        auth: 'none',
        openapi: {
          summary: 'Instance status for the dashboard: whether first-run setup is needed, version, readiness, where the tracking script is served, whether mail can be sent',
          tags: ['node'],
          response: object({
            needs_setup: Type.Boolean(),
            version: Type.String(),
            ready: Type.Boolean(),
            tracker_script_path: Type.String(),
            mail_configured: Type.Boolean({ description: 'An SMTP server is set: password reset by mail, invitation and notice mail work' }),
          }),
        },
        async handler() {
          const ready = runtime.isReady();
          const { trackerScriptPath } = runtime.config;
          // The dashboard's tracking snippet must name the path this instance really serves.
          const tracker_script_path = trackerScriptPath.startsWith('/') ? trackerScriptPath : `/${trackerScriptPath}`;
          return { needs_setup: ready ? (await userCount(runtime.metadata())) === 0 : false, version: VERSION, ready, tracker_script_path, mail_configured: mailConfigured(runtime.config) };
        },
      }),
    },
  };
}
