// All sites the person can see, each with its last 7 days as a sparkline; adding a site.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Plus } from 'lucide-react';
import { useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { api, type Page, problem, type Site, type Team, type TimeseriesPoint } from '../api.ts';
import { Loading } from '../App.tsx';
import { Favicon } from '../components/SiteFrame.tsx';
import { formatNumber } from '../dashboard/format.ts';
import { addDays, todayIn } from '../dashboard/range.ts';
import { useTitle } from '../title.ts';
import { submitHandler } from '../forms.ts';

function Sparkline({ values, label }: { values: number[]; label: string }) {
  const max = Math.max(1, ...values);
  const w = 120;
  const h = 32;
  const step = values.length > 1 ? w / (values.length - 1) : w;
  const points = values.map((v, i) => `${(i * step).toFixed(1)},${(h - 2 - (v / max) * (h - 4)).toFixed(1)}`).join(' ');
  return (
    <svg className="sparkline" viewBox={`0 0 ${w} ${h}`} width={w} height={h} role="img" aria-label={label}>
      <polyline points={points} fill="none" stroke="currentColor" strokeWidth="2" strokeLinejoin="round" />
    </svg>
  );
}

function SiteCard({ site }: { site: Site }) {
  const today = todayIn(site.timezone);
  const series = useQuery({
    queryKey: ['sparkline', site.id, today],
    queryFn: () => api<{ timeseries: TimeseriesPoint[] }>(`/api/sites/${site.id}/stats/timeseries`, { query: { from: addDays(today, -6), to: today, interval: 'day' } }),
  });
  const visitors = series.data?.timeseries.map((p) => p.visitors) ?? [];
  const pageviews = series.data?.timeseries.reduce((sum, p) => sum + p.pageviews, 0);
  return (
    <li className="card site-card">
      <Link to={`/sites/${site.id}`} className="site-link">
        <span className="site-name">
          <Favicon domain={site.domain} />
          {site.domain}
        </span>
        <span className="site-figures">
          {series.data ? (
            <>
              <Sparkline values={visitors} label={`Visitors per day over the last 7 days: ${visitors.join(', ')}`} />
              <span className="muted small">{formatNumber(pageviews ?? 0)} pageviews in 7 days</span>
            </>
          ) : (
            <span className="muted small">{series.isError ? 'No figures' : 'Loading…'}</span>
          )}
        </span>
      </Link>
    </li>
  );
}

function AddSite({ teams, onDone }: { teams: Team[]; onDone(site: Site): void }) {
  const [domain, setDomain] = useState('');
  const [teamId, setTeamId] = useState(teams[0]?.id ?? '');
  const [timezone, setTimezone] = useState(() => Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC');
  const create = useMutation({
    mutationFn: () => api<{ site: Site }>('/api/sites', { method: 'POST', body: { domain: domain.trim(), team_id: teamId, timezone } }),
    onSuccess: (r) => onDone(r.site),
  });
  const submit = submitHandler(() => create.mutate());
  return (
    <form className="card stack" onSubmit={submit} aria-labelledby="add-site-title">
      <h2 id="add-site-title">Add a site</h2>
      <label className="field">
        <span>Domain</span>
        <input name="domain" value={domain} onChange={(e) => setDomain(e.target.value)} placeholder="example.com" required />
      </label>
      {teams.length > 1 && (
        <label className="field">
          <span>Team</span>
          <select value={teamId} onChange={(e) => setTeamId(e.target.value)}>
            {teams.map((t) => (
              <option key={t.id} value={t.id}>
                {t.name}
              </option>
            ))}
          </select>
        </label>
      )}
      <label className="field">
        <span>Time zone (days and hours follow it)</span>
        <input name="timezone" value={timezone} onChange={(e) => setTimezone(e.target.value)} required />
      </label>
      {create.isError && (
        <p className="error" role="alert">
          {problem(create.error)}
        </p>
      )}
      <button type="submit" className="button primary" disabled={create.isPending}>
        Add site
      </button>
    </form>
  );
}

export default function Sites() {
  const sites = useQuery({ queryKey: ['sites'], queryFn: () => api<Page<Site>>('/api/sites', { query: { limit: 200 } }) });
  const teams = useQuery({ queryKey: ['teams'], queryFn: () => api<Page<Team>>('/api/user/teams') });
  const [adding, setAdding] = useState(false);
  useTitle('Sites');
  const navigate = useNavigate();
  const queries = useQueryClient();
  if (sites.isPending) return <Loading />;
  const adminTeams = (teams.data?.items ?? []).filter((t) => !t.archived_at && (t.role === 'owner' || t.role === 'admin'));
  const list = sites.data?.items ?? [];
  return (
    <section className="page">
      <header className="page-head">
        <h1>Sites</h1>
        {adminTeams.length > 0 && !adding && (
          <button type="button" className="button primary" onClick={() => setAdding(true)}>
            <Plus aria-hidden size={16} /> Add a site
          </button>
        )}
      </header>
      {sites.isError && <p className="error">{sites.error.message}</p>}
      {adding && (
        <AddSite
          teams={adminTeams}
          onDone={(site) => {
            void queries.invalidateQueries({ queryKey: ['sites'] });
            navigate(`/sites/${site.id}/settings`);
          }}
        />
      )}
      {list.length === 0 && !adding && <p className="muted">No sites yet. Add one to get its tracking snippet.</p>}
      <ul className="site-list">
        {list.map((site) => (
          <SiteCard key={site.id} site={site} />
        ))}
      </ul>
    </section>
  );
}
