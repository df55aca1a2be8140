// The cluster as operators see it (GET /api/admin/cluster), and the leader's end of forwarded
// server ingest (cluster.receive, called node to node, never over HTTP).
import type { Context, ServiceSchema } from 'moleculer';
import type { ForwardedBatch } from '../cluster/forwarding.ts';
import { ClusterView } from '../cluster/responses.ts';
import { action } from '../lib/openapi/action.ts';
import type { Runtime } from '../lib/runtime.ts';

export default function createClusterService(runtime: Runtime): ServiceSchema {
  return {
    name: 'cluster',
    settings: { rest: '/' },
    actions: {
      view: action({
        rest: 'GET /api/admin/cluster',
        auth: 'user',
        access: { instance: 'admin' },
        openapi: {
          response: ClusterView,
          summary: 'Cluster state as this node sees it: nodes, leader, fencing epoch, lease expiry, ingest buffer depth, forwarding counters (instance owners and admins)',
          tags: ['admin'],
        },
        handler(this: { broker: Context['broker'] }) {
          return runtime.cluster.view(this.broker, runtime.metadata());
        },
      }),
      receive: {
        // Node to node only: no rest alias, so the gateway never publishes it.
        visibility: 'public',
        params: { batchId: 'string|min:1|max:100', records: { type: 'array', min: 1, items: 'object' } },
        handler: (ctx: Context<ForwardedBatch>) => runtime.cluster.receive(ctx.params),
      },
    },
  };
}
