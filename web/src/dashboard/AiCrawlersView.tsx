// What AI crawlers and assistants fetched from a site over a range (GET /api/sites/{id}/ai-fetches/…):
// key figures, fetches over time, tables by assistant, family, category, resource type and status
// class, and the fetched paths beside the visits AI assistants referred to them. A range without
// fetches says how to send them.
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { type ReactNode, useMemo } from 'react';
import { type AiFetchPages, type AiFetchReport, type AiFetchTimeseries, api } from '../api.ts';
import { ListTable } from '../components/ListTable.tsx';
import { bucketLabel } from './dates.ts';
import { formatBytes, formatNumber, valueLabel } from './format.ts';
import { addDays, type DateRange, describeRange } from './range.ts';
import { TimeChart } from './TimeChart.tsx';

type Breakdown = keyof AiFetchReport['breakdowns'];
const BREAKDOWNS: { key: Breakdown; title: string; column: string }[] = [
  { key: 'assistant_family', title: 'Families', column: 'Family' },
  { key: 'assistant_category', title: 'Categories', column: 'Category' },
  { key: 'resource_type', title: 'Resource types', column: 'Resource type' },
  { key: 'status_class', title: 'Status codes', column: 'Status' },
];

/** Hours for a range of up to two days, as the stats chart does; days beyond. */
const intervalOf = (range: DateRange) => (range.to <= addDays(range.from, 1) ? 'hour' : 'day');

function Kpi({ label, value, id }: { label: string; value: string; id: string }) {
  return (
    <div className="kpi">
      <p className="kpi-label">{label}</p>
      <p className="kpi-value" data-testid={`ai-kpi-${id}`}>
        {value}
      </p>
    </div>
  );
}

function EmptyState({ siteId }: { siteId: string }) {
  return (
    <section className="card stack" data-testid="ai-empty">
      <h2>No AI crawler fetches in this range</h2>
      <p>
        Plumb learns what AI crawlers and assistants (GPTBot, ClaudeBot, PerplexityBot, …) fetch from your web server’s logs. Forward their hits to{' '}
        <code>POST /api/sites/{siteId}/ingest/ai-fetch</code> with an API token that holds <code>ai-fetch:write</code> for this site: see the README, section “Forwarding AI
        crawler logs”.
      </p>
    </section>
  );
}

function Card({ title, children }: { title: string; children: ReactNode }) {
  const id = `ai-${title.toLowerCase().replace(/[^a-z]+/g, '-')}`;
  return (
    <section className="card panel" aria-labelledby={id} data-panel={title}>
      <header className="panel-head">
        <h2 id={id}>{title}</h2>
      </header>
      {children}
    </section>
  );
}

export function AiCrawlersView({ siteId, range, timezone }: { siteId: string; range: DateRange; timezone: string }) {
  const base = `/api/sites/${siteId}/ai-fetches`;
  const interval = intervalOf(range);
  const summary = useQuery({
    queryKey: ['ai-fetches', 'summary', siteId, range],
    queryFn: ({ signal }) => api<AiFetchReport>(`${base}/summary`, { query: { ...range }, signal }),
    placeholderData: keepPreviousData,
  });
  const series = useQuery({
    queryKey: ['ai-fetches', 'timeseries', siteId, range, interval],
    queryFn: ({ signal }) => api<AiFetchTimeseries>(`${base}/timeseries`, { query: { ...range, interval }, signal }),
    placeholderData: keepPreviousData,
  });
  const pages = useQuery({
    queryKey: ['ai-fetches', 'pages', siteId, range],
    queryFn: ({ signal }) => api<AiFetchPages>(`${base}/pages`, { query: { ...range }, signal }),
    placeholderData: keepPreviousData,
  });
  const chart = useMemo(() => {
    const rows = series.data?.rows ?? [];
    return { buckets: rows.map((r) => r.bucket), series: [{ label: 'Fetches', values: rows.map((r) => r.fetches), total: summary.data?.totals.fetches }] };
  }, [series.data, summary.data]);

  const failed = summary.error ?? series.error ?? pages.error;
  if (failed) {
    return (
      <p className="error" role="alert">
        Could not load the AI crawler reports: {failed.message}
      </p>
    );
  }
  if (!summary.data) return <div className="kpis placeholder" aria-busy="true" />;
  const { totals, assistants, breakdowns } = summary.data;
  const landings = pages.data?.unfetched_landings ?? [];

  return (
    <>
      {totals.fetches === 0 ? (
        <EmptyState siteId={siteId} />
      ) : (
        <>
          <section aria-label="Key figures" className="kpis" data-testid="ai-kpis">
            <Kpi id="fetches" label="Fetches" value={formatNumber(totals.fetches)} />
            <Kpi id="assistants" label="Assistants" value={formatNumber(totals.assistants)} />
            <Kpi id="pages" label="Pages fetched" value={formatNumber(totals.pages)} />
            <Kpi id="errors" label="Error answers" value={formatNumber(totals.errors)} />
            <Kpi id="bytes" label="Bytes served" value={formatBytes(totals.bytes)} />
          </section>
          {series.data && (
            <section className="card" aria-label="AI fetches over time">
              <TimeChart title="AI fetches over time" buckets={chart.buckets} series={chart.series} interval={series.data.interval} timezone={timezone} totalsLabel={describeRange(range)} />
            </section>
          )}
          <Card title="Assistants">
            <ListTable columns={['Assistant', 'Family', 'Category', 'Fetches', 'Errors', 'Pages', 'Last fetch']} numeric={['Fetches', 'Errors', 'Pages']} testId="ai-assistants" label="Assistants">
              {assistants.map((a) => (
                <tr key={a.assistant_name}>
                  <th scope="row">{a.assistant_name}</th>
                  <td>{a.assistant_family}</td>
                  <td>{a.assistant_category}</td>
                  <td className="num">{formatNumber(a.fetches)}</td>
                  <td className="num">{formatNumber(a.errors)}</td>
                  <td className="num">{formatNumber(a.pages)}</td>
                  <td className="nowrap">{bucketLabel(Date.parse(a.last_fetch_at), 'hour', timezone)}</td>
                </tr>
              ))}
            </ListTable>
          </Card>
          <div className="panels">
            {BREAKDOWNS.map((b) => (
              <Card key={b.key} title={b.title}>
                <ListTable columns={[b.column, 'Fetches', 'Assistants']} numeric={['Fetches', 'Assistants']} testId={`ai-${b.key}`} label={b.title}>
                  {breakdowns[b.key].map((row) => (
                    <tr key={row.value}>
                      <th scope="row">{valueLabel(row.value)}</th>
                      <td className="num">{formatNumber(row.fetches)}</td>
                      <td className="num">{formatNumber(row.assistants)}</td>
                    </tr>
                  ))}
                </ListTable>
              </Card>
            ))}
          </div>
        </>
      )}
      {pages.data && (totals.fetches > 0 || landings.length > 0) && (
        <Card title="Fetched pages and AI-referred visits">
          {pages.data.fetched.length > 0 && (
            <ListTable columns={['Path', 'Fetches', 'Assistants', 'AI-referred visits']} numeric={['Fetches', 'Assistants', 'AI-referred visits']} testId="ai-fetched-pages" label="Fetched pages">
              {pages.data.fetched.map((p) => (
                <tr key={p.path}>
                  <th scope="row">{p.path}</th>
                  <td className="num">{formatNumber(p.fetches)}</td>
                  <td className="num">{formatNumber(p.assistants)}</td>
                  <td className="num">{formatNumber(p.ai_referred_visits)}</td>
                </tr>
              ))}
            </ListTable>
          )}
          <h3>AI-referred landing pages no AI agent fetched</h3>
          {landings.length === 0 ? (
            <p className="muted small">None: every page AI assistants sent visitors to was fetched by an AI agent in this range.</p>
          ) : (
            <ListTable columns={['Path', 'AI-referred visits']} numeric={['AI-referred visits']} testId="ai-unfetched-landings" label="Landing pages no AI agent fetched">
              {landings.map((p) => (
                <tr key={p.path}>
                  <th scope="row">{p.path}</th>
                  <td className="num">{formatNumber(p.ai_referred_visits)}</td>
                </tr>
              ))}
            </ListTable>
          )}
        </Card>
      )}
    </>
  );
}
