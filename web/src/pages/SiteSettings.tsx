// Settings of a site: general (time zone, extra hostnames), tracking snippet, goals, funnels,
// share links, and deleting the site.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { api, problem, type Site } from '../api.ts';
import { FunnelsPanel } from '../components/Funnels.tsx';
import { GoalsPanel } from '../components/Goals.tsx';
import { ShareLinks } from '../components/ShareLinks.tsx';
import { SiteMembers, TransferSite } from '../components/SiteAccess.tsx';
import { SiteFrame } from '../components/SiteFrame.tsx';
import { submitHandler } from '../forms.ts';

function General({ site }: { site: Site }) {
  const queries = useQueryClient();
  const [timezone, setTimezone] = useState(site.timezone);
  const [hostnames, setHostnames] = useState(site.hostnames.join('\n'));
  const save = useMutation({
    mutationFn: () =>
      api<{ site: Site }>(`/api/sites/${site.id}`, {
        method: 'PATCH',
        body: {
          timezone: timezone.trim(),
          hostnames: hostnames
            .split(/[\s,]+/)
            .map((h) => h.trim())
            .filter(Boolean),
        },
      }),
    onSuccess: (r) => queries.setQueryData(['site', site.id], r.site),
  });
  const submit = submitHandler(() => save.mutate());
  return (
    <form className="stack" onSubmit={submit}>
      <label className="field">
        <span>Time zone</span>
        <input value={timezone} onChange={(e) => setTimezone(e.target.value)} required />
      </label>
      <label className="field">
        <span>Other hostnames this site answers on (one per line)</span>
        <textarea rows={3} value={hostnames} onChange={(e) => setHostnames(e.target.value)} />
      </label>
      {save.isError && <p className="error">{problem(save.error)}</p>}
      {save.isSuccess && <p role="status">Saved.</p>}
      <button type="submit" className="button primary" disabled={save.isPending}>
        Save
      </button>
    </form>
  );
}

function Snippet() {
  const status = useQuery({ queryKey: ['status'], queryFn: () => api<{ tracker_script_path: string }>('/api/status', { session: false }) });
  const src = `${window.location.origin}${status.data?.tracker_script_path ?? '/plumb.js'}`;
  const snippet = `<script>window.plumb = window.plumb || function () { (window.plumb.q = window.plumb.q || []).push(arguments) };</script>\n<script defer src="${src}"></script>`;
  return (
    <div className="stack">
      <p>Add this to every page of the site, inside &lt;head&gt;:</p>
      <pre className="code" data-testid="snippet">
        <code>{snippet}</code>
      </pre>
      <button type="button" className="button" onClick={() => void navigator.clipboard?.writeText(snippet)}>
        Copy snippet
      </button>
      <p className="muted small">
        Custom events: <code>plumb('event', 'Signup', {'{'} plan: 'pro' {'}'})</code>
      </p>
    </div>
  );
}

function DeleteSite({ site }: { site: Site }) {
  const navigate = useNavigate();
  const queries = useQueryClient();
  const remove = useMutation({
    mutationFn: () => api(`/api/sites/${site.id}`, { method: 'DELETE' }),
    onSuccess: () => {
      void queries.invalidateQueries({ queryKey: ['sites'] });
      navigate('/');
    },
  });
  return (
    <div className="stack">
      <p>Deleting the site also deletes all of its analytics. This cannot be undone.</p>
      {remove.isError && <p className="error">{problem(remove.error)}</p>}
      <button
        type="button"
        className="button danger"
        onClick={() => {
          if (confirm(`Delete ${site.domain} and all of its analytics?`)) remove.mutate();
        }}
      >
        Delete {site.domain}
      </button>
    </div>
  );
}

function Section({ id, title, children }: { id: string; title: string; children: React.ReactNode }) {
  return (
    <section className="card stack" aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {children}
    </section>
  );
}

export default function SiteSettings() {
  return (
    <SiteFrame title="Settings">
      {(site) => (
        <div className="stack">
          <Section id="tracking" title="Tracking snippet">
            <Snippet />
          </Section>
          <Section id="general" title="General">
            <General site={site} />
          </Section>
          <Section id="goals" title="Goals">
            <GoalsPanel siteId={site.id} canEdit={site.role !== 'viewer'} />
          </Section>
          <Section id="funnels" title="Funnels">
            <FunnelsPanel siteId={site.id} canEdit={site.role !== 'viewer'} />
          </Section>
          {(site.role === 'owner' || site.role === 'admin') && (
            <Section id="share" title="Share links">
              <ShareLinks siteId={site.id} />
            </Section>
          )}
          {(site.role === 'owner' || site.role === 'admin') && (
            <Section id="people" title="People">
              <SiteMembers site={site} />
            </Section>
          )}
          {site.role === 'owner' && (
            <Section id="transfer" title="Move to another team">
              <TransferSite site={site} />
            </Section>
          )}
          {site.role === 'owner' && (
            <Section id="danger" title="Delete site">
              <DeleteSite site={site} />
            </Section>
          )}
        </div>
      )}
    </SiteFrame>
  );
}
