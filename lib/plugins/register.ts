// Composing the enabled plugins into a node: their settings (claiming their `-<plugin>-<key>`
// flags), a host API each, their services on the broker, their leader jobs, and their migrations
// in the stores-ready phase. A contribution that breaks the contract stops start-up naming the
// plugin: routes outside the plugin's namespace, a service named like Plumb's own.
import type { ServiceBroker, ServiceSchema } from 'moleculer';
import type { LeaderJobs } from '../../cluster/leader-jobs.ts';
import { type AccessRule, declaredRoutes } from '../auth/access.ts';
import { SITE_RANK, type SiteRole } from '../auth/roles.ts';
import { ConfigError } from '../errors.ts';
import type { Runtime } from '../runtime.ts';
import {
  PANEL_REFRESH_SECONDS,
  PLUGIN_VALUE_FORMATS,
  type PluginAction,
  type PluginCapability,
  type PluginDefinition,
  type PluginPanel,
  type PluginSettingsSection,
  type PluginStatusLine,
} from './contract.ts';
import { createPluginHost, pluginSchema } from './host.ts';
import type { LoadedPlugin } from './loader.ts';
import { resolvePluginSettings } from './settings.ts';

/** A running plugin as GET /api/admin/plugins shows it. */
export interface RunningPlugin {
  name: string;
  version: string;
  api_version: number;
  description: string;
  source: string;
  routes: string[];
  /** Powers beyond the host API the plugin was granted. */
  capabilities: PluginCapability[];
  /** Its lines for the system page, when it has any (not part of the plugins list's answer). */
  systemStatus?: () => Promise<readonly PluginStatusLine[]>;
  /** The site role each of its routes that declares `access.site` asks for, by route (not part of the plugins list's answer). */
  siteRoles?: Readonly<Record<string, SiteRole>>;
}

/** A button as the dashboard gets it: its route in full (`{site}` for the site's id on a site's pages). */
export interface ActionButton {
  id: string;
  label: string;
  route: string;
  confirm?: string;
  /** The browser goes on to the answer's `url`. */
  opens_url?: boolean;
  /** On a site's dashboard: the least site role its route allows; the button is drawn for that role and those above it. */
  role?: SiteRole;
  /** In a settings section: drawn only while the section's GET answer has `field` equal to one of `in`. */
  shown_when?: PluginAction['shownWhen'];
}
/** A table row's button as the dashboard gets it; its route's other `{field}` segments are filled from the row. */
export type RowActionButton = Omit<ActionButton, 'opens_url'> & { method: 'POST' | 'DELETE'; danger?: boolean };

type TablePanel = Omit<Extract<PluginPanel, { kind: 'table' }>, 'refreshSeconds' | 'actions'>;
type KpisPanel = Omit<Extract<PluginPanel, { kind: 'kpis' }>, 'refreshSeconds' | 'actions'>;
/**
 * A panel as the dashboard gets it: the plugin's descriptor with the routes of the panel and of its
 * buttons in full, and on a site's dashboard the least site role each route allows (`role`).
 */
export type SitePanel = (KpisPanel | (Omit<TablePanel, 'rowActions'> & { row_actions: RowActionButton[] })) & {
  plugin: string;
  route: string;
  refresh_seconds?: number;
  role?: SiteRole;
  actions?: ActionButton[];
};
/** A site-settings section as the dashboard gets it, its routes in full (`{site}` for the site's id). */
export type SiteSettingsSection = Omit<PluginSettingsSection, 'actions'> & { plugin: string; route: string; actions: ActionButton[] };

/** A plugin's page for instance administrators, its panels' and buttons' routes in full. */
export interface AdminPage {
  plugin: string;
  title: string;
  nav_label: string;
  actions: ActionButton[];
  panels: SitePanel[];
}

export interface DashboardContributions {
  site_panels: SitePanel[];
  site_settings: SiteSettingsSection[];
  admin_pages: AdminPage[];
}

/** A segment of a row action's path filled from the row: `{id}`. */
const ROW_FIELD = /^\{[A-Za-z_][A-Za-z0-9_]*\}$/;

/**
 * Whether `served` (`DELETE /api/plugins/archives/backups/:id`) is `method` on `path`; with `rowFields`,
 * a `{field}` segment of `path` stands for a `:param` segment of the served route.
 */
function isServed(served: string, method: string, path: string, rowFields: boolean): boolean {
  const [servedMethod, servedPath = ''] = served.split(' ');
  const have = servedPath.split('/');
  const want = path.split('/');
  return (
    servedMethod === method &&
    have.length === want.length &&
    want.every((segment, at) => (rowFields && ROW_FIELD.test(segment) ? have[at].startsWith(':') : segment === have[at]))
  );
}

/** Why a descriptor's `format` is refused, or null when it is one the dashboard knows. */
function formatProblem(format: unknown): string | null {
  if (format === undefined || (PLUGIN_VALUE_FORMATS as readonly unknown[]).includes(format)) return null;
  return `has format ${JSON.stringify(format)}; a format is one of ${PLUGIN_VALUE_FORMATS.join(', ')}`;
}

/**
 * The panel's descriptor checked beyond its routes: a refresh the dashboard can keep to (a whole
 * number of seconds, not so often that open pages hammer the node) and formats it knows.
 */
function checkPanel(plugin: string, what: string, panel: PluginPanel) {
  const { refreshSeconds: every } = panel;
  const { min, max } = PANEL_REFRESH_SECONDS;
  if (every !== undefined && !(Number.isInteger(every) && every >= min && every <= max)) {
    throw new Error(`plugin ${plugin}: ${what} has refreshSeconds ${typeof every === 'number' ? String(every) : JSON.stringify(every)}; it must be a whole number of seconds from ${min} to ${max}`);
  }
  const formatted = panel.kind === 'table' ? panel.columns.map((c) => ({ part: `column "${c.key}"`, format: c.format })) : panel.kpis.map((k) => ({ part: `KPI "${k.key}"`, format: k.format }));
  for (const { part, format } of formatted) {
    const problem = formatProblem(format);
    if (problem) throw new Error(`plugin ${plugin}: ${part} of ${what} ${problem}`);
  }
}

/**
 * A settings section's fields and conditions checked: a read-only field is never sent, so it cannot
 * be required; only a read-only one is formatted, hidden or a list; a field's choices come from a
 * list of the section, and an action's condition reads a field of it.
 */
function checkSection(plugin: string, section: PluginSettingsSection) {
  const what = `settings section "${section.id}"`;
  const { properties } = section.schema;
  for (const [key, field] of Object.entries(properties)) {
    const which = `field "${key}" of ${what}`;
    if (field.readOnly && section.schema.required?.includes(key)) throw new Error(`plugin ${plugin}: ${which} is read-only and required; a read-only field is never sent`);
    if (field.format !== undefined && !field.readOnly) throw new Error(`plugin ${plugin}: ${which} has a format but is not read-only; a format applies to shown values only`);
    if (field.hidden && !field.readOnly) throw new Error(`plugin ${plugin}: ${which} is hidden but not read-only; a person could not set it`);
    if (field.type === 'array' && !field.readOnly) throw new Error(`plugin ${plugin}: ${which} is an array but not read-only; a list is only shown or offered as choices`);
    const problem = formatProblem(field.format);
    if (problem) throw new Error(`plugin ${plugin}: ${which} ${problem}`);
    if (field.choicesFrom !== undefined) {
      const source = Object.hasOwn(properties, field.choicesFrom) ? properties[field.choicesFrom] : undefined;
      if (field.type !== 'string' || field.readOnly || field.enum) throw new Error(`plugin ${plugin}: ${which} has choicesFrom; only an editable string field without an enum takes its choices from a list`);
      if (source?.type !== 'array' || !source.readOnly) throw new Error(`plugin ${plugin}: ${which} takes its choices from "${field.choicesFrom}", which is not a read-only array field of the section`);
    }
  }
  for (const action of section.actions ?? []) {
    const condition = action.shownWhen;
    if (condition === undefined) continue;
    const which = `action "${action.id}" of ${what}`;
    if (typeof condition.field !== 'string' || !Object.hasOwn(properties, condition.field)) throw new Error(`plugin ${plugin}: ${which} is shown by the field ${JSON.stringify(condition.field)}, which is not in the section's schema`);
    if (!Array.isArray(condition.in) || condition.in.length === 0) throw new Error(`plugin ${plugin}: ${which} has a shownWhen without values in "in"; it would never be shown`);
  }
}

/** What the running plugins add to the dashboard; every descriptor must name routes its plugin serves, with the right methods. */
export function dashboardOf(plugins: readonly LoadedPlugin[], running: readonly RunningPlugin[]): DashboardContributions {
  const contributions: DashboardContributions = { site_panels: [], site_settings: [], admin_pages: [] };
  for (const { definition } of plugins) {
    const { routes: served = [], siteRoles = {} } = running.find((plugin) => plugin.name === definition.name) ?? {};
    /**
     * A descriptor's `path` on a site's pages or the admin page, which the plugin must serve with each
     * of `methods`: its full route, and the least site role the routes serving it allow (the highest
     * of their `access.site` roles; none when they declare none).
     */
    const resolve = (where: 'site' | 'admin', what: string, path: string, methods: string[], rowFields = false) => {
      const full = where === 'admin' ? `/api/plugins/${definition.name}${path}` : `/api/sites/:id/plugins/${definition.name}${path}`;
      let role: SiteRole | undefined;
      for (const method of methods) {
        const serving = served.find((candidate) => isServed(candidate, method, full, rowFields));
        if (!serving) throw new Error(`plugin ${definition.name}: ${what} uses ${method} ${full}, a route the plugin does not serve`);
        const asked = siteRoles[serving];
        if (asked && (!role || SITE_RANK[asked] > SITE_RANK[role])) role = asked;
      }
      return { route: full.replace(':id', '{site}'), role: where === 'site' ? role : undefined, full };
    };
    const route = (where: 'site' | 'admin', what: string, path: string, methods: string[], rowFields = false) => resolve(where, what, path, methods, rowFields).route;
    const button = (where: 'site' | 'admin', what: string, { id, label, path, confirm, opensUrl, shownWhen }: PluginAction): ActionButton => {
      if (shownWhen !== undefined && what !== 'settings action') throw new Error(`plugin ${definition.name}: ${what} "${id}" has shownWhen; only a settings section's action is drawn by the state its section reads`);
      return { id, label, confirm, opens_url: opensUrl, route: route(where, `${what} "${id}"`, path, ['POST']), shown_when: shownWhen };
    };
    /** A site panel's buttons: each POSTs to a site route that says which site roles may call it, so the dashboard draws it for those only. */
    const panelActions = (where: 'site' | 'admin', what: string, actions: readonly PluginAction[]): ActionButton[] => {
      if (where === 'admin') throw new Error(`plugin ${definition.name}: ${what} has actions; a panel's actions are for the site dashboard, the admin page has its own actions`);
      const ids = new Set<string>();
      return actions.map((action) => {
        const which = `action "${action.id}" of ${what}`;
        if (ids.has(action.id)) throw new Error(`plugin ${definition.name}: ${what} has two actions with the id "${action.id}"`);
        ids.add(action.id);
        if (typeof action.label !== 'string' || action.label.trim() === '') throw new Error(`plugin ${definition.name}: ${which} has no label`);
        if (action.shownWhen !== undefined) throw new Error(`plugin ${definition.name}: ${which} has shownWhen; only a settings section's action is drawn by the state its section reads`);
        const call = resolve(where, which, action.path, ['POST']);
        if (!call.role) throw new Error(`plugin ${definition.name}: ${which} uses POST ${call.full}, which declares no access.site role; the dashboard draws a panel's button only for the site roles its route allows`);
        return { id: action.id, label: action.label, confirm: action.confirm, opens_url: action.opensUrl, route: call.route, role: call.role };
      });
    };
    const panelOf = (where: 'site' | 'admin', panel: PluginPanel): SitePanel => {
      const what = `${where === 'admin' ? 'admin page panel' : 'dashboard panel'} "${panel.id}"`;
      checkPanel(definition.name, what, panel);
      const { refreshSeconds, actions, ...described } = panel;
      const buttons = actions ? { actions: panelActions(where, what, actions) } : {};
      const read = resolve(where, what, panel.path, ['GET']);
      const resolved = { plugin: definition.name, route: read.route, refresh_seconds: refreshSeconds, role: read.role, ...buttons };
      if (described.kind === 'kpis') return { ...described, ...resolved };
      const { rowActions = [], ...table } = described;
      const row_actions = rowActions.map(({ id, label, method, path, confirm, danger }) => {
        const call = resolve(where, `row action "${id}" of ${what}`, path, [method], true);
        return { id, label, method, confirm, danger, route: call.route, role: call.role };
      });
      return { ...table, ...resolved, row_actions };
    };
    for (const panel of definition.dashboard?.sitePanels ?? []) contributions.site_panels.push(panelOf('site', panel));
    const page = definition.dashboard?.adminPage;
    if (page) {
      contributions.admin_pages.push({
        plugin: definition.name,
        title: page.title,
        nav_label: page.navLabel,
        actions: (page.actions ?? []).map((action) => button('admin', 'admin page action', action)),
        panels: page.panels.map((panel) => panelOf('admin', panel)),
      });
    }
    for (const section of definition.dashboard?.siteSettings ?? []) {
      checkSection(definition.name, section);
      contributions.site_settings.push({
        ...section,
        plugin: definition.name,
        route: route('site', `settings section "${section.id}"`, section.path, ['GET', 'PUT']),
        actions: (section.actions ?? []).map((action) => button('site', 'settings action', action)),
      });
    }
  }
  return contributions;
}

/** The plugins' settings, checked before anything starts; flags no plugin claims are refused. */
export function settlePluginSettings(plugins: readonly LoadedPlugin[], env: NodeJS.ProcessEnv, flags: ReadonlyMap<string, string>): Map<string, Record<string, unknown>> {
  const unclaimed = new Map(flags);
  const settled = new Map(plugins.map(({ definition }) => [definition.name, resolvePluginSettings(definition, env, unclaimed)]));
  const [stray] = unclaimed.keys();
  if (stray !== undefined) throw new ConfigError(`-${stray}`, 'unknown flag: neither a setting of Plumb nor of an enabled plugin (see plumb --help)');
  return settled;
}

/** Where a plugin's routes may live: its own namespace, or under a site it acts on. */
function routeProblem(plugin: string, route: string): string | null {
  const path = route.replace(/^[A-Z*]+\s+/, '');
  if (path.startsWith(`/api/plugins/${plugin}/`) || path === `/api/plugins/${plugin}`) return null;
  if (new RegExp(`^/api/sites/:[a-zA-Z]+/plugins/${plugin}(/|$)`).test(path)) return null;
  return `route "${route}" is outside /api/plugins/${plugin}/… and /api/sites/:id/plugins/${plugin}/…`;
}

function checkService(definition: PluginDefinition, schema: ServiceSchema): { routes: string[]; siteRoles: Record<string, SiteRole> } {
  const name = definition.name;
  if (schema.name !== `plugins.${name}` && !String(schema.name).startsWith(`plugins.${name}.`)) {
    throw new Error(`plugin ${name}: service "${schema.name}" must be named plugins.${name} or plugins.${name}.<part>`);
  }
  const routes: string[] = [];
  const siteRoles: Record<string, SiteRole> = {};
  // The plugin's own declarations, read before the broker has seen them.
  const { actions: declared = {} } = schema;
  for (const [actionName, action] of Object.entries(declared)) {
    if (!action || typeof action !== 'object') continue;
    const { rest, access } = action as { rest?: unknown; access?: AccessRule };
    for (const route of declaredRoutes(rest)) {
      const problem = routeProblem(name, route);
      if (problem) throw new Error(`plugin ${name}: action ${actionName}'s ${problem}`);
      routes.push(route);
      if (access?.site) siteRoles[route] = access.site.role;
    }
  }
  return { routes, siteRoles };
}

/** Builds each plugin's host, registers its services and leader jobs, and queues its migrations for the stores-ready phase. */
export function registerPlugins(
  broker: ServiceBroker,
  runtime: Runtime,
  leaderJobs: LeaderJobs,
  plugins: readonly LoadedPlugin[],
  settings: ReadonlyMap<string, Record<string, unknown>>,
): RunningPlugin[] {
  return plugins.map(({ definition, specifier }) => {
    const { name } = definition;
    const contributed = <T>(part: string, make: () => T): T => {
      try {
        return make();
      } catch (err) {
        throw new Error(`plugin ${name} failed to start: its ${part} threw: ${(err as Error).message}`, { cause: err });
      }
    };
    // Building the host reads the plugin's analytics migrations: a misnamed file stops start-up here.
    const host = contributed('analytics migrations', () =>
      createPluginHost(runtime, name, settings.get(name) ?? {}, {
        events: definition.webhookEvents ?? [],
        capabilities: definition.capabilities,
        analyticsMigrations: definition.analyticsMigrations,
        notifyWebhooks: () => void broker.broadcast('webhooks.queued', {}),
      }),
    );
    const dir = definition.metadataMigrations;
    // Before any of the plugin's own hooks: its tables exist by the time they run.
    if (dir) void runtime.whenStoresReady(async () => void (await runtime.metadata().migrate({ name, dir, schema: pluginSchema(name) })));
    const routes: string[] = [];
    const siteRoles: Record<string, SiteRole> = {};
    for (const schema of contributed('services()', () => definition.services?.(host as never) ?? [])) {
      const checked = checkService(definition, schema);
      routes.push(...checked.routes);
      Object.assign(siteRoles, checked.siteRoles);
      broker.createService(schema);
    }
    for (const { name: jobName, job } of contributed('leaderJobs()', () => definition.leaderJobs?.(host as never) ?? [])) leaderJobs.register(`plugins.${name}.${jobName}`, job);
    return {
      name,
      version: definition.version,
      api_version: definition.apiVersion,
      description: definition.description,
      source: specifier,
      routes,
      capabilities: [...(definition.capabilities ?? [])],
      systemStatus: contributed('systemStatus()', () => definition.systemStatus?.(host as never)),
      siteRoles,
    };
  });
}
