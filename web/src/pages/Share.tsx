// A shared dashboard: anyone with the link sees one site's analytics, read-only, without signing
// in. A password-protected link asks for its password first.
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { useParams, useSearchParams } from 'react-router';
import { ApiError, api, problem, type Site } from '../api.ts';
import { Loading } from '../App.tsx';
import { ThemeToggle } from '../components/Layout.tsx';
import { Favicon } from '../components/SiteFrame.tsx';
import { DashboardView } from '../dashboard/DashboardView.tsx';
import { EventsView } from '../dashboard/EventsView.tsx';
import { useTitle } from '../title.ts';

function Unlock({ token }: { token: string }) {
  const queries = useQueryClient();
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    try {
      await api(`/api/share/${token}/unlock`, { method: 'POST', body: { password }, session: false });
      await queries.invalidateQueries({ queryKey: ['share-view', token] });
    } catch (err) {
      setError(problem(err));
    }
  };
  return (
    <form className="card stack narrow" onSubmit={submit}>
      <h1>This dashboard is protected</h1>
      <label className="field">
        <span>Password</span>
        <input type="password" value={password} onChange={(e) => setPassword(e.target.value)} required />
      </label>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      <button type="submit" className="button primary">
        Open dashboard
      </button>
    </form>
  );
}

export default function Share() {
  const { token = '' } = useParams();
  const [params, setParams] = useSearchParams();
  const view = useQuery({
    queryKey: ['share-view', token],
    queryFn: () => api<{ site: Site; name: string | null }>(`/api/share/${token}`, { session: false }),
    retry: false,
  });
  const base = `/api/share/${token}`;
  useTitle(view.data?.site.domain, 'Shared dashboard');
  const tab = params.get('view') === 'events' ? 'events' : 'dashboard';
  let body: React.ReactNode;
  if (view.isPending) body = <Loading />;
  else if (view.error instanceof ApiError && view.error.code === 'password_required') body = <Unlock token={token} />;
  else if (view.isError) {
    body = (
      <div className="card narrow">
        <h1>Link not available</h1>
        <p>This share link does not exist, was revoked or has expired.</p>
      </div>
    );
  } else {
    const site = view.data.site;
    body = (
      <section className="page">
        <header className="page-head">
          <h1>
            <Favicon domain={site.domain} />
            <span>{site.domain}</span>
          </h1>
          <nav aria-label="Shared views" className="subnav">
            <button type="button" aria-pressed={tab === 'dashboard'} onClick={() => setParams({})}>
              Dashboard
            </button>
            <button type="button" aria-pressed={tab === 'events'} onClick={() => setParams({ view: 'events' })}>
              Events
            </button>
          </nav>
        </header>
        {tab === 'dashboard' ? (
          <DashboardView base={base} timezone={site.timezone} realtime={false} />
        ) : (
          <EventsView base={base} timezone={site.timezone} />
        )}
      </section>
    );
  }
  return (
    <>
      <header className="topbar">
        <span className="brand">
          <span className="brand-mark" aria-hidden>
            ◆
          </span>
          Plumb <span className="muted small">shared dashboard</span>
        </span>
        <div className="topbar-end">
          <ThemeToggle />
        </div>
      </header>
      <main id="main">{body}</main>
    </>
  );
}
