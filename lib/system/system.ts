// What GET /api/admin/system shows an instance's owners and admins: this node (version, uptime,
// memory), the cluster, how big each store and each team's analytics are, ingest and its
// refusals, the webhook and mail backlogs, what the running plugins report (the last backup), and the
// active settings with secrets masked. Gathered on each request from the stores and the node.
import type { Static } from '@sinclair/typebox';
import { getHeapStatistics } from 'node:v8';
import type { ServiceBroker } from 'moleculer';
import { VERSION } from '../brand.ts';
import { activeSettings } from '../config.ts';
import type { RunningPlugin } from '../plugins/register.ts';
import type { Runtime } from '../runtime.ts';
import { deliveryBacklog } from '../webhooks/queue.ts';
import { mailBacklog } from '../mail/queue.ts';
import { mailConfigured } from '../mail/transport.ts';
import type { SystemView } from './responses.ts';

export type SystemStatus = Static<typeof SystemView>;

export async function systemStatus(runtime: Runtime, broker: ServiceBroker, plugins: readonly RunningPlugin[]): Promise<SystemStatus> {
  const metadata = runtime.metadata();
  const analytics = runtime.analytics();
  const [cluster, metadataBytes, teams, tenants, refused, backlog, mail, pluginStatus] = await Promise.all([
    runtime.cluster.view(broker, metadata),
    metadata
      .query<{ bytes: number }>('SELECT pg_database_size(current_database())::float8 AS bytes')
      .then(({ rows }) => rows[0].bytes, () => null),
    metadata.query<{ id: string; name: string }>('SELECT id, name FROM teams').then(({ rows }) => rows),
    analytics.query<{ database: string; bytes: string; rows: string }>(
      `SELECT database, toString(sum(bytes_on_disk)) AS bytes, toString(sum(rows)) AS rows
         FROM system.parts WHERE active AND startsWith(database, 'tenant_')
        GROUP BY database ORDER BY sum(bytes_on_disk) DESC, database`,
    ),
    metadata
      .query<{ reason: string; count: number }>('SELECT reason, sum(count)::float8 AS count FROM ingest_rejections WHERE day = (now() AT TIME ZONE \'UTC\')::date GROUP BY reason ORDER BY reason')
      .then(({ rows }) => rows),
    deliveryBacklog(metadata),
    mailBacklog(metadata),
    Promise.all(plugins.map(async (plugin) => ({ name: plugin.name, version: plugin.version, status: [...((await plugin.systemStatus?.()) ?? [])] }))),
  ]);
  const teamOf = new Map(teams.map((team) => [analytics.tenantDatabase(team.id), team]));
  const memory = process.memoryUsage();
  return {
    version: VERSION,
    node_id: runtime.config.nodeId,
    started_at: new Date(Date.now() - process.uptime() * 1000).toISOString(),
    uptime_seconds: Math.floor(process.uptime()),
    memory: { rss_bytes: memory.rss, heap_used_bytes: memory.heapUsed, heap_limit_bytes: getHeapStatistics().heap_size_limit },
    cluster,
    stores: {
      metadata: { kind: metadata.kind, bytes: metadataBytes },
      analytics: {
        kind: analytics.kind,
        bytes: tenants.reduce((sum, t) => sum + Number(t.bytes), 0),
        rows: tenants.reduce((sum, t) => sum + Number(t.rows), 0),
        teams: tenants.map((t) => ({ team_id: teamOf.get(t.database)?.id ?? null, name: teamOf.get(t.database)?.name ?? null, database: t.database, bytes: Number(t.bytes), rows: Number(t.rows) })),
      },
    },
    ingest: { accepted_per_second: runtime.metrics.recentIngestRate(), refused_today: refused, journal_fsync: runtime.metrics.recentJournalFsyncs() },
    webhooks: { pending: backlog.pending ?? 0, retrying: backlog.retrying ?? 0, processing: backlog.processing ?? 0 },
    mail: { configured: mailConfigured(runtime.config), pending: mail.pending ?? 0, retrying: mail.retrying ?? 0, processing: mail.processing ?? 0, failed: mail.failed ?? 0 },
    plugins: pluginStatus,
    settings: activeSettings(runtime.config),
  };
}
