// Settings of a site, as sections with an in-page table of contents: the tracking snippet, general
// (time zone, extra hostnames), where goals and funnels are edited, share links, people, moving
// the site to another team, and deleting it. Goals and funnels have their own pages; this page
// links there rather than offering a second editor.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type ReactNode, useEffect, useRef, useState } from 'react';
import { Link, useLocation, useNavigate } from 'react-router';
import { api, type Funnel, type Goal, type Page, problem, type Site } from '../api.ts';
import { CopyButton } from '../components/CopyButton.tsx';
import { Imports } from '../components/Imports.tsx';
import { PluginSettings } from '../components/PluginSettings.tsx';
import { type SiteSettingsSection, usePluginDashboard } from '../dashboard/plugin-dashboard.ts';
import { Field, sortFieldErrors, useFocusFirstInvalid } from '../components/Field.tsx';
import { ShareLinks } from '../components/ShareLinks.tsx';
import { SiteMembers, TransferSite } from '../components/SiteAccess.tsx';
import { SiteFrame } from '../components/SiteFrame.tsx';
import { TakeoutDownload } from '../components/Takeout.tsx';
import { TimeZoneField } from '../components/TimeZoneField.tsx';
import { useBusyAction } from '../busy.ts';
import { submitHandler } from '../forms.ts';

const siteField = (field: string) => (field === 'timezone' ? 'timezone' : field === 'hostnames' || field.startsWith('hostnames') ? 'hostnames' : null);

function General({ site }: { site: Site }) {
  const queries = useQueryClient();
  const form = useRef<HTMLFormElement>(null);
  const [timezone, setTimezone] = useState(site.timezone);
  const [hostnames, setHostnames] = useState(site.hostnames.join('\n'));
  // Set on each save without a zone, so the focus returns to the field every time.
  const [zoneMissing, setZoneMissing] = useState<object | null>(null);
  const save = useMutation({
    mutationFn: () =>
      api<{ site: Site }>(`/api/sites/${site.id}`, {
        method: 'PATCH',
        body: {
          timezone,
          hostnames: hostnames
            .split(/[\s,]+/)
            .map((h) => h.trim())
            .filter(Boolean),
        },
      }),
    onSuccess: (r) => queries.setQueryData(['site', site.id], r.site),
  });
  const { byField, rest } = sortFieldErrors(save.error, siteField);
  const zoneError = zoneMissing && !timezone ? 'Choose a time zone from the list, e.g. Europe/Berlin' : byField.timezone;
  useFocusFirstInvalid(form, zoneMissing);
  useFocusFirstInvalid(form, save.error);
  const submit = submitHandler(() => {
    setZoneMissing(timezone ? null : {});
    if (timezone) save.mutate();
  });
  return (
    <form className="stack" onSubmit={submit} ref={form} aria-label="General settings" noValidate>
      <TimeZoneField label="Time zone" hint="Reports count days and hours in this zone." value={timezone} onChange={setTimezone} error={zoneError} />
      <Field label="Other hostnames this site answers on (one per line)" inline={false} error={byField.hostnames}>
        {(a11y) => <textarea {...a11y} rows={3} value={hostnames} onChange={(e) => setHostnames(e.target.value)} />}
      </Field>
      {save.isError && rest.length + Object.keys(byField).length === 0 && <p className="error">{problem(save.error)}</p>}
      {rest.length > 0 && <p className="error">{rest.join('; ')}</p>}
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
      <div className="form-actions">
        <CopyButton text={snippet} label="Copy snippet" />
      </div>
      <p className="muted small">
        Custom events: <code>plumb('event', 'Signup', {'{'} plan: 'pro' {'}'})</code>
      </p>
    </div>
  );
}

const counted = (n: number | undefined, one: string, other: string) => (n === undefined ? '' : `${n} ${n === 1 ? one : other}`);

function GoalsAndFunnels({ site }: { site: Site }) {
  // The same queries as the Goals and Funnels pages, so following the links finds them cached.
  const goals = useQuery({ queryKey: ['goals', site.id], queryFn: () => api<Page<Goal>>(`/api/sites/${site.id}/goals`, { query: { limit: 200 } }) });
  const funnels = useQuery({ queryKey: ['funnels', site.id], queryFn: () => api<Page<Funnel>>(`/api/sites/${site.id}/funnels`, { query: { limit: 200 } }) });
  const figures = [counted(goals.data?.total, 'goal', 'goals'), counted(funnels.data?.total, 'funnel', 'funnels')].filter(Boolean).join(' · ');
  return (
    <div className="stack">
      <p>
        Goals count the visitors who did what matters (an event such as a signup, or a visit to a page); funnels show where visitors drop off between
        steps. Each has its own page, with its figures beside it.
      </p>
      {figures && <p className="muted small">This site has {figures}.</p>}
      <div className="form-actions">
        <Link className="button" to={`/sites/${site.id}/goals`}>
          Edit goals
        </Link>
        <Link className="button" to={`/sites/${site.id}/funnels`}>
          Edit funnels
        </Link>
      </div>
    </div>
  );
}

function DeleteSite({ site }: { site: Site }) {
  const navigate = useNavigate();
  const queries = useQueryClient();
  const { error, busy, run } = useBusyAction();
  const remove = () =>
    run(async () => {
      await api(`/api/sites/${site.id}`, { method: 'DELETE' });
      void queries.invalidateQueries({ queryKey: ['sites'] });
      navigate('/');
    });
  return (
    <div className="stack">
      <p>Deleting the site also deletes all of its analytics. This cannot be undone.</p>
      {error && <p className="error">{error}</p>}
      <button
        type="button"
        className="button danger"
        disabled={busy}
        onClick={() => {
          if (confirm(`Delete ${site.domain} and all of its analytics?`)) void remove();
        }}
      >
        Delete {site.domain}
      </button>
    </div>
  );
}

interface SectionSpec {
  id: string;
  title: string;
  body: ReactNode;
}

/** The sections this person may use: viewers and editors never reach this page (SiteFrame offers it to admins and owners). */
function sectionsFor(site: Site, fromPlugins: readonly SiteSettingsSection[]): SectionSpec[] {
  const owner = site.role === 'owner';
  const manage = owner || site.role === 'admin';
  // Plugins' sections follow Plumb's own settings, before the people and the site's fate.
  const plugins = manage ? fromPlugins.map((section) => ({ id: `plugin-${section.plugin}-${section.id}`, title: section.title, body: <PluginSettings section={section} siteId={site.id} timezone={site.timezone} /> })) : [];
  return [
    { id: 'tracking', title: 'Tracking snippet', body: <Snippet /> },
    { id: 'general', title: 'General', body: <General site={site} /> },
    { id: 'goals', title: 'Goals and funnels', body: <GoalsAndFunnels site={site} /> },
    ...plugins,
    ...(manage
      ? [
          { id: 'share', title: 'Share links', body: <ShareLinks siteId={site.id} /> },
          { id: 'people', title: 'People', body: <SiteMembers site={site} /> },
          { id: 'imports', title: 'Import data', body: <Imports site={site} /> },
          {
            id: 'takeout',
            title: 'Download all data',
            body: (
              <TakeoutDownload
                route={`/api/sites/${site.id}/takeout`}
                label="Download all data of this site"
                description="Everything Plumb holds about this site, its whole history: its settings, goals, funnels and share links (without passwords or tokens), its pageviews, events, visits, web vitals and AI fetches, and the figures imported from other tools. A takeout can be imported into another Plumb instance."
              />
            ),
          },
        ]
      : []),
    ...(owner
      ? [
          { id: 'transfer', title: 'Move site', body: <TransferSite site={site} /> },
          { id: 'danger', title: 'Delete site', body: <DeleteSite site={site} /> },
        ]
      : []),
  ];
}

function Sections({ site }: { site: Site }) {
  const contributed = usePluginDashboard();
  const sections = sectionsFor(site, contributed.data?.site_settings ?? []);
  const { hash } = useLocation();
  // An address with #people opens at that section once it is on the page (it was not at load).
  useEffect(() => {
    if (hash) document.getElementById(decodeURIComponent(hash.slice(1)))?.scrollIntoView();
  }, [hash]);
  return (
    <div className="settings">
      <nav className="settings-toc" aria-label="Settings sections">
        <ul>
          {sections.map((s) => (
            <li key={s.id}>
              <a href={`#${s.id}`} aria-current={hash === `#${s.id}` ? 'location' : undefined}>
                {s.title}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <div className="stack settings-sections">
        {sections.map((s) => (
          <section key={s.id} className="card stack" aria-labelledby={s.id}>
            <h2 id={s.id}>{s.title}</h2>
            {s.body}
          </section>
        ))}
      </div>
    </div>
  );
}

export default function SiteSettings() {
  return <SiteFrame title="Settings">{(site) => <Sections site={site} />}</SiteFrame>;
}
