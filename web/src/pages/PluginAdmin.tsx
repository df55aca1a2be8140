// A plugin's page for instance administrators (`/plugins/<plugin>`), drawn from what the plugin
// describes (GET /api/dashboard/plugins): its buttons, which POST to its routes, show the answer's
// message and then read the panels again, and its panels, each read from one of its routes.
import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useParams } from 'react-router';
import { Loading } from '../App.tsx';
import { ActionOutcome, usePluginActions } from '../dashboard/plugin-actions.tsx';
import { type AdminPage, usePluginDashboard } from '../dashboard/plugin-dashboard.ts';
import { PluginPanel } from '../dashboard/PluginPanels.tsx';
import { useSession } from '../session.tsx';
import { useTitle } from '../title.ts';

const moment = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/** The page's buttons and, below them, what the last one answered; the panels are read again after each. */
function PageActions({ page }: { page: AdminPage }) {
  const queries = useQueryClient();
  const [said, setSaid] = useState<string | null>(null);
  const actions = usePluginActions({ onAnswer: setSaid, onDone: () => void queries.invalidateQueries({ queryKey: ['plugin-panel', page.plugin] }) });
  return (
    <>
      <div className="form-actions">{actions.buttons(page.actions)}</div>
      <ActionOutcome error={actions.error} said={said} />
    </>
  );
}

export default function PluginAdmin() {
  const { plugin = '' } = useParams();
  const { user } = useSession();
  const admin = user?.role === 'owner' || user?.role === 'admin';
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
  // Its routes answer instance administrators only: anyone else would get buttons and panels that
  // each answer "forbidden".
  if (!admin) {
    return (
      <section className="page">
        <h1>{page.title}</h1>
        <p className="muted">This page is for the administrators of this Plumb instance.</p>
      </section>
    );
  }
  return (
    <section className="page stack">
      <header className="page-head">
        <h1>{page.title}</h1>
      </header>
      {page.actions.length > 0 && <PageActions page={page} />}
      {page.panels.map((panel) => (
        <PluginPanel key={panel.id} panel={panel} moment={moment} />
      ))}
    </section>
  );
}
