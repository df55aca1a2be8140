// What the node runs of its plugins: for instance administrators, each enabled plugin with its
// version, the plugin API it targets, where it was loaded from and the routes it adds, and the
// plugins that are not enabled but whose data the metadata store still keeps; for the dashboard,
// what the plugins describe for it: panels, site-settings sections, administrators' pages, and
// their buttons.
import { type Static, Type } from '@sinclair/typebox';
import type { Context, ServiceSchema } from 'moleculer';
import { action } from '../lib/openapi/action.ts';
import { nullable, object, stringEnum } from '../lib/openapi/responses.ts';
import { SITE_ROLES } from '../lib/auth/roles.ts';
import { PANEL_REFRESH_SECONDS, PLUGIN_VALUE_FORMATS } from '../lib/plugins/contract.ts';
import type { DashboardContributions, RunningPlugin } from '../lib/plugins/register.ts';
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
      capabilities: Type.Array(stringEnum(['archive']), { description: 'Powers beyond the plugin API the plugin holds; archive: a copy of all data in both stores' }),
    }),
  ),
});

const Format = stringEnum(PLUGIN_VALUE_FORMATS, {
  description: 'How the value is written: number (the default) in the reader’s locale, bytes as a 1024-based size ("8.1 KiB"), datetime an RFC 3339 string as a date and time, country an ISO 3166-1 alpha-2 code as the country’s name',
});

const FormField = object({
  type: stringEnum(['string', 'integer', 'boolean', 'array'], { description: 'array: a read-only list of strings' }),
  title: Type.String(),
  description: Type.Optional(Type.String()),
  enum: Type.Optional(Type.Array(Type.String())),
  choicesFrom: Type.Optional(Type.String({ description: 'A choice among the values of this read-only array field of the section’s answer' })),
  hidden: Type.Optional(Type.Boolean({ description: 'A read-only field read (for a condition or choices), never shown' })),
  minimum: Type.Optional(Type.Number()),
  maximum: Type.Optional(Type.Number()),
  maxLength: Type.Optional(Type.Integer()),
  nullable: Type.Optional(Type.Boolean()),
  readOnly: Type.Optional(Type.Boolean({ description: 'A value the plugin reports: shown, never editable, never sent with PUT' })),
  format: Type.Optional(Format),
});

const Role = stringEnum(SITE_ROLES, { description: 'On a site’s dashboard: the least site role the route allows; drawn for that role and those above it' });

const Action = object({
  id: Type.String(),
  label: Type.String(),
  route: Type.String({ description: 'POSTed to ({site} is the site’s id); the answer’s message is shown' }),
  confirm: Type.Optional(Type.String({ description: 'Asked before the action runs' })),
  opens_url: Type.Optional(Type.Boolean({ description: 'The browser goes on to the answer’s url (an http or https URL) instead of showing a message' })),
  role: Type.Optional(Role),
  shown_when: Type.Optional(
    object(
      { field: Type.String(), in: Type.Array(Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()])) },
      { description: 'In a settings section: the button is drawn only while the section’s answer has field equal to one of in' },
    ),
  ),
});

const RowAction = object({
  id: Type.String(),
  label: Type.String(),
  method: stringEnum(['POST', 'DELETE']),
  route: Type.String({ description: 'Called with the method; {site} is the site’s id, every other {field} is the row’s field of that name, URL-encoded' }),
  confirm: Type.Optional(Type.String({ description: 'Asked before the action runs' })),
  danger: Type.Optional(Type.Boolean({ description: 'A destructive action' })),
  role: Type.Optional(Role),
});

const Panel = object({
  plugin: Type.String(),
  id: Type.String(),
  title: Type.String(),
  kind: stringEnum(['table', 'kpis']),
  path: Type.String(),
  route: Type.String({ description: 'The GET route (with {site} for the site’s id on a site’s dashboard); called with from and to there' }),
  empty: Type.Optional(Type.String()),
  refresh_seconds: Type.Optional(Type.Integer({ minimum: PANEL_REFRESH_SECONDS.min, maximum: PANEL_REFRESH_SECONDS.max, description: 'Read the route again every this many seconds while the page is open and visible' })),
  items: Type.Optional(Type.String()),
  columns: Type.Optional(Type.Array(object({ key: Type.String(), label: Type.String(), numeric: Type.Optional(Type.Boolean()), format: Type.Optional(Format) }))),
  kpis: Type.Optional(Type.Array(object({ key: Type.String(), label: Type.String(), format: Type.Optional(Format) }))),
  row_actions: Type.Optional(Type.Array(RowAction, { description: 'A table’s buttons on every row; the table is read again after one succeeds' })),
  role: Type.Optional(Role),
  actions: Type.Optional(
    Type.Array(Action, {
      description: 'Buttons above a site panel: each POSTs {"from", "to"}, the dashboard’s range (YYYY-MM-DD in the site’s time zone), and the plugin’s panels are read again after one succeeds',
    }),
  ),
});

const Contributions = object({
  admin_pages: Type.Array(
    object({
      plugin: Type.String(),
      title: Type.String(),
      nav_label: Type.String(),
      actions: Type.Array(Action, { description: 'Buttons above the panels; the panels are read again after one succeeds' }),
      panels: Type.Array(Panel),
    }),
    {
      description: 'Pages for instance administrators, each reached from the main menu',
    },
  ),
  site_settings: Type.Array(
    object({
      plugin: Type.String(),
      id: Type.String(),
      title: Type.String(),
      description: Type.Optional(Type.String()),
      path: Type.String(),
      route: Type.String({ description: 'GET reads the values, PUT saves them; {site} is the site’s id' }),
      schema: object({ type: Type.Literal('object'), properties: Type.Record(Type.String(), FormField), required: Type.Optional(Type.Array(Type.String())) }),
      actions: Type.Array(Action),
    }),
  ),
  site_panels: Type.Array(Panel),
});

export default function createPluginsService(runtime: Runtime, running: readonly RunningPlugin[], dashboard: DashboardContributions): ServiceSchema {
  // Plain JSON copies: descriptors are frozen `as const` objects in plugins, and the answer may not share them.
  const contributions = JSON.parse(JSON.stringify(dashboard)) as Static<typeof Contributions>;
  return {
    name: 'plugins',
    settings: { rest: '/' },
    actions: {
      dashboard: action({
        rest: 'GET /api/dashboard/plugins',
        auth: 'user',
        openapi: {
          summary: 'What the node’s plugins add to the dashboard: site-dashboard panels, site-settings sections and pages for administrators, with their buttons, described and drawn from the plugins’ own routes',
          tags: ['plugins'],
          response: Contributions,
        },
        handler: () => contributions,
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
              ...running.map(({ systemStatus, siteRoles, ...plugin }) => ({ ...plugin, status: 'running' as const })),
              ...rows
                .filter(({ plugin }) => !enabled.has(plugin))
                .map(({ plugin }) => ({ name: plugin, status: 'disabled' as const, version: null, api_version: null, description: null, source: null, routes: [], capabilities: [] })),
            ],
          };
        },
      }),
    },
  };
}
