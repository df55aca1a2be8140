// The Account page's email reports: every site the person can see, each with an off / weekly /
// monthly choice, saved as soon as it changes (PUT /api/sites/:id/email-report).
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import type { Subscription } from '../../../lib/email-reports/subscriptions.ts';
import { api, type Page, problem, type Site } from '../api.ts';

type Choice = 'off' | 'weekly' | 'monthly';

function SiteChoice({ site, current }: { site: Site; current: Choice }) {
  const queries = useQueryClient();
  const [saved, setSaved] = useState(false);
  const save = useMutation({
    mutationFn: (frequency: Choice) => api<{ frequency: Choice }>(`/api/sites/${site.id}/email-report`, { method: 'PUT', body: { frequency } }),
    onMutate: () => setSaved(false),
    onSuccess: () => {
      setSaved(true);
      void queries.invalidateQueries({ queryKey: ['email-reports'] });
    },
  });
  const id = `email-report-${site.id}`;
  return (
    <li className="inline-form">
      <label className="field inline" htmlFor={id}>
        <span>{site.domain}</span>
      </label>
      <select id={id} value={save.isPending && save.variables ? save.variables : current} onChange={(e) => save.mutate(e.target.value as Choice)} disabled={save.isPending}>
        <option value="off">Off</option>
        <option value="weekly">Weekly</option>
        <option value="monthly">Monthly</option>
      </select>
      {saved && !save.isPending && (
        <span role="status" data-testid={`email-report-saved-${site.domain}`}>
          Saved
        </span>
      )}
      {save.isError && <p className="error">{problem(save.error)}</p>}
    </li>
  );
}

export function EmailReports() {
  const sites = useQuery({ queryKey: ['sites'], queryFn: () => api<Page<Site>>('/api/sites', { query: { limit: 200 } }) });
  const subscriptions = useQuery({ queryKey: ['email-reports'], queryFn: () => api<Page<Subscription>>('/api/user/email-reports', { query: { limit: 200 } }) });
  if (!sites.data || !subscriptions.data) return <p className="muted">Loading…</p>;
  const chosen = new Map(subscriptions.data.items.map((s) => [s.site_id, s.frequency]));
  return (
    <div className="stack">
      <p className="muted">A summary of a site by email: visitors, pageviews, top pages and sources and goal conversions of the last week (Monday to Sunday) or month, in the site’s time zone, compared with the one before.</p>
      {sites.data.items.length === 0 ? (
        <p className="muted">No sites yet.</p>
      ) : (
        <ul className="stack" style={{ listStyle: 'none', padding: 0, margin: 0 }}>
          {sites.data.items.map((site) => (
            <SiteChoice key={site.id} site={site} current={chosen.get(site.id) ?? 'off'} />
          ))}
        </ul>
      )}
    </div>
  );
}
