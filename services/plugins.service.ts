// What the node runs of its plugins: for instance administrators, each enabled plugin with its
// version, the plugin API it targets, where it was loaded from and the routes it adds, and the
// plugins that are not enabled but whose data the metadata store still keeps; for the dashboard,
// the panels the plugins describe for a site's dashboard.
import { Type } from '@sinclair/typebox';
import type { Context, ServiceSchema } from 'moleculer';
import { action } from '../lib/openapi/action.ts';
import { nullable, object, stringEnum } from '../lib/openapi/responses.ts';
import type { RunningPlugin, SitePanel } from '../lib/plugins/register.ts';
import type { Runtime } from '../lib/runtime.ts';
import type { RequestMeta } from '../types/meta.ts';

const PluginList = object({
  plugins: Type.Array(
    object({
      name: Type.String(),
      status: stringEnum(['running', 'disabled'], { description: 'disabled: not enabled on this node, its data kept for when it is enabled again' }),
      version: nullable(Type.String()),
      api_version: nullable(Type.Integer()),
      description: nullable(Type.String()),
      source: nullable(Type.String({ description: 'How -plugins named it: a first-party name, a package or a path' })),
      routes: Type.Array(Type.String()),
    }),
  ),
});

const SitePanels = object({
  site_panels: Type.Array(
    object({
      plugin: Type.String(),
      id: Type.String(),
      title: Type.String(),
      kind: stringEnum(['table', 'kpis']),
      path: Type.String(),
      route: Type.String({ description: 'The GET route with {site} for the site’s id; called with from and to' }),
      empty: Type.Optional(Type.String()),
      items: Type.Optional(Type.String()),
      columns: Type.Optional(Type.Array(object({ key: Type.String(), label: Type.String(), numeric: Type.Optional(Type.Boolean()) }))),
      kpis: Type.Optional(Type.Array(object({ key: Type.String(), label: Type.String() }))),
    }),
  ),
});

export default function createPluginsService(runtime: Runtime, running: readonly RunningPlugin[], sitePanels: readonly SitePanel[]): ServiceSchema {
  return {
    name: 'plugins',
    settings: { rest: '/' },
    actions: {
      sitePanels: action({
        rest: 'GET /api/dashboard/plugin-panels',
        auth: 'user',
        openapi: { summary: 'The site-dashboard panels the node’s plugins describe, drawn by the dashboard from the plugins’ routes', tags: ['plugins'], response: SitePanels },
        handler: () => ({ site_panels: sitePanels.map((panel) => ({ ...panel, columns: 'columns' in panel ? [...panel.columns] : undefined, kpis: 'kpis' in panel ? [...panel.kpis] : undefined })) }),
      }),

      list: action({
        rest: 'GET /api/admin/plugins',
        auth: 'user',
        access: { instance: 'admin' },
        openapi: { summary: 'The plugins this node runs, and those whose data is kept while they are not enabled (instance administrators)', tags: ['admin'], response: PluginList },
        async handler(_ctx: Context<unknown, RequestMeta>) {
          const { rows } = await runtime.metadata().query<{ plugin: string }>(
            'SELECT plugin FROM plugin_migrations UNION SELECT plugin FROM plugin_state ORDER BY plugin',
          );
          const enabled = new Set(running.map((plugin) => plugin.name));
          return {
            plugins: [
              ...running.map((plugin) => ({ ...plugin, status: 'running' as const })),
              ...rows
                .filter(({ plugin }) => !enabled.has(plugin))
                .map(({ plugin }) => ({ name: plugin, status: 'disabled' as const, version: null, api_version: null, description: null, source: null, routes: [] })),
            ],
          };
        },
      }),
    },
  };
}
