// A site's pages share a heading with its favicon and domain, and the site navigation.
import { useQuery } from '@tanstack/react-query';
import { Globe } from 'lucide-react';
import { type ReactNode, useState } from 'react';
import { NavLink, useLocation, useParams } from 'react-router';
import { api, type Site } from '../api.ts';
import { useTitle } from '../title.ts';
import { Loading } from '../App.tsx';

export function useSite() {
  const { siteId = '' } = useParams();
  return useQuery({ queryKey: ['site', siteId], queryFn: () => api<{ site: Site }>(`/api/sites/${siteId}`).then((r) => r.site) });
}

/** The site's icon through Plumb's favicon proxy (never from another host); a globe when it has none. */
export function Favicon({ domain }: { domain: string }) {
  const [failed, setFailed] = useState(false);
  if (failed) return <Globe className="favicon" aria-hidden size={20} />;
  return <img className="favicon" src={`/api/favicon/${encodeURIComponent(domain)}`} alt="" width={20} height={20} loading="lazy" onError={() => setFailed(true)} />;
}

export function SiteFrame({ title, children }: { title: string; children: (site: Site) => ReactNode }) {
  const site = useSite();
  const location = useLocation();
  useTitle(site.data?.domain, title);
  if (site.isPending) return <Loading />;
  if (site.isError) {
    return (
      <section className="page">
        <h1>Site not available</h1>
        <p className="error">{site.error.message}</p>
      </section>
    );
  }
  const s = site.data;
  const search = keepRange(location.search);
  const manage = s.role === 'owner' || s.role === 'admin';
  return (
    <section className="page">
      <header className="page-head">
        <h1>
          <Favicon domain={s.domain} />
          <span>{s.domain}</span>
          <span className="visually-hidden">: {title}</span>
        </h1>
        <nav aria-label="Site" className="subnav">
          <NavLink to={`/sites/${s.id}${search}`} end>
            Dashboard
          </NavLink>
          <NavLink to={`/sites/${s.id}/events${search}`}>Events</NavLink>
          <NavLink to={`/sites/${s.id}/goals${search}`}>Goals</NavLink>
          <NavLink to={`/sites/${s.id}/funnels${search}`}>Funnels</NavLink>
          <NavLink to={`/sites/${s.id}/ai-crawlers${search}`}>AI crawlers</NavLink>
          {manage && <NavLink to={`/sites/${s.id}/settings`}>Settings</NavLink>}
        </nav>
      </header>
      {children(s)}
    </section>
  );
}

/** The date range travels between a site's views; filters and selections stay with their view. */
function keepRange(search: string): string {
  const current = new URLSearchParams(search);
  const next = new URLSearchParams();
  for (const key of ['period', 'from', 'to']) {
    const value = current.get(key);
    if (value) next.set(key, value);
  }
  const text = next.toString();
  return text ? `?${text}` : '';
}
