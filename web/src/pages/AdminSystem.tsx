// The instance at a glance, for owners and admins (GET /api/admin/system): this node, the
// cluster, how big the stores and each team's analytics are, ingest (with how long the journal's
// fsyncs take) and what it refused today, the webhook and mail backlogs, what plugins report (the
// last backup), and the active settings. It reads the figures again every 15 seconds while open.
import { useQuery } from '@tanstack/react-query';
import { api, type SystemStatus } from '../api.ts';
import { ListTable } from '../components/ListTable.tsx';
import { formatBytes, formatDuration, formatMilliseconds, formatNumber } from '../dashboard/format.ts';
import { shownValue } from '../dashboard/plugin-values.ts';
import { useTitle } from '../title.ts';

const moment = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const REFRESH_MS = 15_000;

function Figure({ label, value, testId }: { label: string; value: string; testId: string }) {
  return (
    <div className="kpi">
      <p className="kpi-label">{label}</p>
      <p className="kpi-value" data-testid={testId}>
        {value}
      </p>
    </div>
  );
}

/** A setting's value as text: lists joined, an unset one as such. */
function settingText(value: unknown): string {
  if (value === undefined || value === null || value === '') return '(unset)';
  if (Array.isArray(value)) return value.length === 0 ? '—' : value.join(', ');
  return String(value);
}

export default function AdminSystem() {
  useTitle('System');
  const system = useQuery({ queryKey: ['admin-system'], queryFn: () => api<SystemStatus>('/api/admin/system'), refetchInterval: REFRESH_MS });
  const view = system.data;
  return (
    <section className="page">
      <header className="page-head">
        <h1>System</h1>
        {view && (
          <p className="muted">
            Plumb {view.version} · node {view.node_id}
          </p>
        )}
      </header>
      {system.isError && <p className="error">{system.error.message}</p>}
      {system.isPending && <p className="muted">Loading…</p>}
      {view && (
        <>
          <section aria-label="This node" className="kpis">
            <Figure label="Up for" value={formatDuration(view.uptime_seconds)} testId="system-uptime" />
            <Figure label="Memory (RSS)" value={formatBytes(view.memory.rss_bytes)} testId="system-rss" />
            <Figure label="JavaScript heap" value={`${formatBytes(view.memory.heap_used_bytes)} of ${formatBytes(view.memory.heap_limit_bytes)}`} testId="system-heap" />
            <Figure label="Events per second" value={formatNumber(view.ingest.accepted_per_second)} testId="system-ingest-rate" />
            <Figure label="Waiting to be stored" value={view.cluster.buffer ? formatNumber(view.cluster.buffer.pending) : '—'} testId="system-journal" />
            {view.cluster.mode === 'single' && (
              <Figure label="Journal fsync p99" value={view.ingest.journal_fsync ? formatMilliseconds(view.ingest.journal_fsync.p99_ms) : '—'} testId="system-journal-fsync" />
            )}
            <Figure label="Analytics data" value={formatBytes(view.stores.analytics.bytes)} testId="system-analytics-bytes" />
            <Figure label="Webhooks queued" value={formatNumber(view.webhooks.pending + view.webhooks.retrying)} testId="system-webhooks" />
            {view.mail.configured && <Figure label="Mail queued" value={formatNumber(view.mail.pending + view.mail.retrying + view.mail.processing)} testId="system-mail" />}
            {view.mail.configured && view.mail.failed > 0 && <Figure label="Mail failed (30 days)" value={formatNumber(view.mail.failed)} testId="system-mail-failed" />}
          </section>

          <section className="card stack" aria-labelledby="system-cluster">
            <h2 id="system-cluster">{view.cluster.mode === 'cluster' ? 'Cluster' : 'Node'}</h2>
            <p>
              {view.cluster.mode === 'cluster'
                ? `Leader: ${view.cluster.leader.node_id ?? 'none right now'}${view.cluster.leader.epoch === null ? '' : ` (epoch ${view.cluster.leader.epoch})`}`
                : 'A single node, which runs the leader-only jobs (backups, webhook deliveries, imports) itself.'}
            </p>
            <ListTable columns={['Node', 'Role', 'Available']} label="Nodes">
              {view.cluster.nodes.map((node) => (
                <tr key={node.node_id}>
                  <th scope="row">
                    {node.node_id}
                    {node.local && <span className="muted"> (this one)</span>}
                  </th>
                  <td>{node.leader ? 'leader' : 'follower'}</td>
                  <td>{node.available ? 'yes' : 'no'}</td>
                </tr>
              ))}
            </ListTable>
          </section>

          <section className="card stack" aria-labelledby="system-stores">
            <h2 id="system-stores">Stores</h2>
            <p>
              Metadata: {view.stores.metadata.kind === 'pglite' ? 'embedded PostgreSQL (PGlite)' : 'PostgreSQL'}
              {view.stores.metadata.bytes !== null && `, ${formatBytes(view.stores.metadata.bytes)}`}. Analytics:{' '}
              {view.stores.analytics.kind === 'chdb' ? 'embedded ClickHouse (chDB)' : 'ClickHouse'}, {formatBytes(view.stores.analytics.bytes)} in {formatNumber(view.stores.analytics.rows)} rows.
            </p>
            <ListTable columns={['Team', 'Rows', 'Size']} numeric={['Rows', 'Size']} label="Analytics by team" testId="system-teams">
              {view.stores.analytics.teams.map((team) => (
                <tr key={team.database}>
                  <th scope="row">{team.name ?? <span className="muted">{team.database} (team deleted)</span>}</th>
                  <td className="num">{formatNumber(team.rows)}</td>
                  <td className="num">{formatBytes(team.bytes)}</td>
                </tr>
              ))}
            </ListTable>
          </section>

          <section className="card stack" aria-labelledby="system-refused">
            <h2 id="system-refused">Refused today</h2>
            {view.ingest.refused_today.length === 0 ? (
              <p className="muted">Nothing refused today (UTC).</p>
            ) : (
              <ListTable columns={['Reason', 'Events']} numeric={['Events']} label="Refused today">
                {view.ingest.refused_today.map((row) => (
                  <tr key={row.reason}>
                    <th scope="row">{row.reason}</th>
                    <td className="num">{formatNumber(row.count)}</td>
                  </tr>
                ))}
              </ListTable>
            )}
          </section>

          {view.plugins
            .filter((plugin) => plugin.status.length > 0)
            .map((plugin) => (
              <section key={plugin.name} className="card stack" aria-labelledby={`system-plugin-${plugin.name}`}>
                <h2 id={`system-plugin-${plugin.name}`}>
                  {plugin.name} <span className="muted">{plugin.version}</span>
                </h2>
                <dl className="facts">
                  {plugin.status.map((line) => (
                    <div key={line.label}>
                      <dt>{line.label}</dt>
                      <dd>{line.value === null ? 'never' : shownValue(line.value, line.format, moment)}</dd>
                    </div>
                  ))}
                </dl>
              </section>
            ))}

          <section className="card stack" aria-labelledby="system-settings">
            <h2 id="system-settings">Settings</h2>
            <p className="muted">As this node runs; secrets are masked. Change them with flags or environment variables (see the README).</p>
            <dl className="setting-list" data-testid="system-settings">
              {view.settings.map((setting) => (
                <div key={setting.flag} data-setting={setting.flag}>
                  <dt>
                    <code>{setting.flag}</code>
                    <code className="muted" data-env>
                      {setting.env}
                    </code>
                  </dt>
                  <dd>{settingText(setting.value)}</dd>
                </div>
              ))}
            </dl>
          </section>
        </>
      )}
    </section>
  );
}
