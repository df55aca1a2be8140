// Response schema of GET /api/admin/system (services/system.service.ts).
import { Type } from '@sinclair/typebox';
import { ClusterView } from '../../cluster/responses.ts';
import { DateTime, nullable, object, stringEnum } from '../openapi/responses.ts';
import { PLUGIN_VALUE_FORMATS } from '../plugins/contract.ts';

const count = Type.Integer({ minimum: 0 });

export const SystemView = object({
  version: Type.String(),
  node_id: Type.String(),
  started_at: DateTime,
  uptime_seconds: count,
  memory: object({ rss_bytes: count, heap_used_bytes: count, heap_limit_bytes: { ...count, description: 'The JavaScript heap\'s ceiling (-heap-mb, and the young generation beside it)' } }, { description: 'This node process' }),
  cluster: ClusterView,
  stores: object({
    metadata: object({ kind: stringEnum(['pglite', 'postgres']), bytes: nullable(count) }),
    analytics: object({
      kind: stringEnum(['chdb', 'clickhouse']),
      bytes: count,
      rows: count,
      teams: Type.Array(object({ team_id: nullable(Type.String({ format: 'uuid' })), name: nullable(Type.String()), database: Type.String(), bytes: count, rows: count }), {
        description: 'Each team’s analytics database, largest first (a database whose team is gone has no id or name)',
      }),
    }),
  }),
  ingest: object({
    accepted_per_second: Type.Number({ minimum: 0, description: 'Items this node accepted per second over the last minute' }),
    refused_today: Type.Array(object({ reason: Type.String(), count }), { description: 'Refused today (UTC) on every node, by reason, as counted so far' }),
    journal_fsync: nullable(
      object(
        { fsyncs: count, p50_ms: Type.Number({ minimum: 0 }), p99_ms: Type.Number({ minimum: 0 }), max_ms: Type.Number({ minimum: 0 }) },
        {
          description:
            "Single node: the ingest journal's fsyncs of the last minute (at most the latest 4,096), each of which an ingest answer waits for by default: how many, the median, the 99th percentile and the longest, in milliseconds. null when there was none (an idle node, or a cluster node, whose ingest goes to the stream)",
        },
      ),
    ),
  }),
  webhooks: object({ pending: count, retrying: count, processing: count }),
  mail: object({ configured: Type.Boolean(), pending: count, retrying: count, processing: count, failed: count }, { description: 'The mail outbox: messages waiting, being sent, and given up on (kept 30 days)' }),
  plugins: Type.Array(
    object({
      name: Type.String(),
      version: Type.String(),
      status: Type.Array(object({ label: Type.String(), value: Type.Union([Type.String(), Type.Number(), Type.Null()]), format: Type.Optional(stringEnum(PLUGIN_VALUE_FORMATS)) })),
    }),
  ),
  settings: Type.Array(
    object({
      flag: Type.String(),
      env: Type.String(),
      value: Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Array(Type.String()), Type.Null()], { description: 'null when unset' }),
    }),
    { description: 'Every setting of this node as it runs, in the README’s order, secrets masked' },
  ),
});
