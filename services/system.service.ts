// The instance as its operators see it (GET /api/admin/system): node, cluster, stores, ingest,
// queues, plugins' state and the active settings. Thin action over lib/system/.
import type { Context, ServiceSchema } from 'moleculer';
import { action } from '../lib/openapi/action.ts';
import type { RunningPlugin } from '../lib/plugins/register.ts';
import type { Runtime } from '../lib/runtime.ts';
import { SystemView } from '../lib/system/responses.ts';
import { systemStatus } from '../lib/system/system.ts';

export default function createSystemService(runtime: Runtime, plugins: readonly RunningPlugin[]): ServiceSchema {
  return {
    name: 'system',
    settings: { rest: '/' },
    actions: {
      view: action({
        rest: 'GET /api/admin/system',
        auth: 'user',
        access: { instance: 'admin' },
        openapi: {
          response: SystemView,
          summary: 'This node and the instance: version, uptime, memory, cluster, store sizes per team, ingest rate and refusals, webhook backlog, plugins’ state (the last backup), active settings with secrets masked (instance owners and admins)',
          tags: ['admin'],
        },
        handler(this: { broker: Context['broker'] }) {
          return systemStatus(runtime, this.broker, plugins);
        },
      }),
    },
  };
}
