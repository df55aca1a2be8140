// A plugin's page for instance administrators (`/plugins/<plugin>`), drawn from what the plugin
// describes (GET /api/dashboard/plugins): its panels, each read from one of its routes.
import { useParams } from 'react-router';
import { Loading } from '../App.tsx';
import { usePluginDashboard } from '../dashboard/plugin-dashboard.ts';
import { PluginPanel } from '../dashboard/PluginPanels.tsx';
import { useTitle } from '../title.ts';

const moment = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

export default function PluginAdmin() {
  const { plugin = '' } = useParams();
  const contributed = usePluginDashboard();
  const page = contributed.data?.admin_pages.find((candidate) => candidate.plugin === plugin);
  useTitle(page?.title ?? 'Plugin');
  if (contributed.isPending) return <Loading />;
  if (!page) {
    return (
      <section className="page">
        <h1>Not found</h1>
        <p className="muted">No enabled plugin called “{plugin}” has a page here.</p>
      </section>
    );
  }
  return (
    <section className="page stack">
      <header className="page-head">
        <h1>{page.title}</h1>
      </header>
      {page.panels.map((panel) => (
        <PluginPanel key={panel.id} panel={panel} path={panel.route} moment={moment} />
      ))}
    </section>
  );
}
