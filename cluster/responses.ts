// Response schema of GET /api/admin/cluster (services/cluster.service.ts): published in the
// OpenAPI document and the type the handler must return.
import { Type } from '@sinclair/typebox';
import { DateTime, nullable, object, stringEnum } from '../lib/openapi/responses.ts';

const count = Type.Integer({ minimum: 0 });

export const ClusterView = object({
  mode: stringEnum(['cluster', 'single']),
  namespace: Type.String(),
  node_id: Type.String(),
  leader: object({ node_id: nullable(Type.String()), epoch: nullable(Type.Integer()), lease_expires_at: nullable(DateTime) }),
  this_node: object({
    node_id: Type.String(),
    leader: Type.Boolean(),
    epoch: nullable(Type.Integer()),
    terms: Type.Array(object({ epoch: Type.Integer(), started_at: DateTime, ended_at: nullable(DateTime) }), { description: 'Recent leadership terms of this node' }),
  }),
  nodes: Type.Array(object({ node_id: Type.String(), available: Type.Boolean(), local: Type.Boolean(), leader: Type.Boolean(), hostname: nullable(Type.String()) })),
  buffer: nullable(object({ pending: count, bytes: count, unit: stringEnum(['records', 'messages']) }, { description: 'Accepted ingest not yet in the analytics store' })),
  forwarding: nullable(object({ forwarded: count, received: count, buffered: count, stored: count })),
});
