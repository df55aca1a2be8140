// All sites the person can see, each with its last 7 days as a sparkline; adding a site.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Plus } from 'lucide-react';
import { useRef, useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { api, type Page, problem, type Site, type Team, type TimeseriesPoint } from '../api.ts';
import { Loading } from '../App.tsx';
import { Field, sortFieldErrors, useFocusFirstInvalid } from '../components/Field.tsx';
import { PendingInvitations } from '../components/PendingInvitations.tsx';
import { Favicon } from '../components/SiteFrame.tsx';
import { TimeZoneField } from '../components/TimeZoneField.tsx';
import { browserZone } from '../components/time-zones.ts';
import { formatCount, NOUNS } from '../dashboard/format.ts';
import { addDays, todayIn } from '../dashboard/range.ts';
import { useTitle } from '../title.ts';
import { cleanDomain, submitHandler } from '../forms.ts';

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
              <span className="muted small">{formatCount(pageviews ?? 0, NOUNS.pageview)} in 7 days</span>
            </>
          ) : (
            <span className="muted small">{series.isError ? 'No figures' : 'Loading…'}</span>
          )}
        </span>
      </Link>
    </li>
  );
}

/** Where a server field error of POST /api/sites shows: under its field, or (null) for the form. */
const addSiteField = (field: string) => (field === 'domain' || field === 'timezone' ? field : field === 'team_id' ? 'team' : null);

/** The problems the form can see before asking the server, each under its field, all at once. */
function checkSite(domain: string, timezone: string): Record<string, string> {
  const problems: Record<string, string> = {};
  if (domain === '') problems.domain = 'Enter the domain of the site, e.g. example.com';
  else if (!/^[a-z0-9-]+(\.[a-z0-9-]+)+$/.test(domain)) problems.domain = `“${domain}” is not a domain; enter one like example.com`;
  if (timezone === '') problems.timezone = 'Choose a time zone from the list, e.g. Europe/Berlin';
  return problems;
}

function AddSite({ teams, onDone, onCancel }: { teams: Team[]; onDone(site: Site): void; onCancel(): void }) {
  const form = useRef<HTMLFormElement>(null);
  const [domain, setDomain] = useState('');
  const [teamId, setTeamId] = useState(teams[0]?.id ?? '');
  const [timezone, setTimezone] = useState(browserZone);
  const [checked, setChecked] = useState<Record<string, string> | null>(null);
  const create = useMutation({
    mutationFn: (body: { domain: string; team_id: string; timezone: string }) => api<{ site: Site }>('/api/sites', { method: 'POST', body }),
    onSuccess: (r) => onDone(r.site),
  });
  const server = sortFieldErrors(create.error, addSiteField);
  // The form's own findings while they stand; the server's once it has answered.
  const errors = checked && Object.keys(checked).length > 0 ? checked : server.byField;
  // Focus goes to the first field to correct, after the form's own check and after the server's.
  useFocusFirstInvalid(form, checked);
  useFocusFirstInvalid(form, create.error);
  const submit = submitHandler(() => {
    const cleaned = cleanDomain(domain);
    setDomain(cleaned);
    const problems = checkSite(cleaned, timezone);
    setChecked(problems);
    if (Object.keys(problems).length === 0) create.mutate({ domain: cleaned, team_id: teamId, timezone });
  });
  const formProblem = create.isError && Object.keys(errors).length === 0 ? (server.rest.length > 0 ? server.rest.join('; ') : problem(create.error)) : null;
  return (
    <form className="card stack" onSubmit={submit} aria-labelledby="add-site-title" ref={form} noValidate>
      <h2 id="add-site-title">Add a site</h2>
      <div className="form-grid">
        <Field label="Domain" inline={false} error={errors.domain}>
          {(a11y) => (
            <input
              {...a11y}
              name="domain"
              value={domain}
              onChange={(e) => setDomain(e.target.value)}
              // A pasted address becomes its domain as soon as the person moves on.
              onBlur={() => setDomain(cleanDomain(domain))}
              placeholder="example.com"
              autoComplete="off"
              spellCheck={false}
              inputMode="url"
            />
          )}
        </Field>
        {teams.length > 1 && (
          <Field label="Team" inline={false} error={errors.team}>
            {(a11y) => (
              <select {...a11y} value={teamId} onChange={(e) => setTeamId(e.target.value)}>
                {teams.map((t) => (
                  <option key={t.id} value={t.id}>
                    {t.name}
                  </option>
                ))}
              </select>
            )}
          </Field>
        )}
        <TimeZoneField label="Time zone" hint="Reports count days and hours in this zone." value={timezone} onChange={setTimezone} error={errors.timezone} />
      </div>
      {formProblem && (
        <p className="error" role="alert">
          {formProblem}
        </p>
      )}
      <div className="form-actions">
        <button type="submit" className="button primary" disabled={create.isPending}>
          Add site
        </button>
        <button type="button" className="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
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
      <PendingInvitations />
      {sites.isError && <p className="error">{sites.error.message}</p>}
      {adding && (
        <AddSite
          teams={adminTeams}
          onCancel={() => setAdding(false)}
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
