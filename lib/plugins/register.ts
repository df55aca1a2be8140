// Composing the enabled plugins into a node: their settings (claiming their `-<plugin>-<key>`
// flags), a host API each, their services on the broker, their leader jobs, and their migrations
// in the stores-ready phase. A contribution that breaks the contract stops start-up naming the
// plugin: routes outside the plugin's namespace, a service named like Plumb's own.
import type { ServiceBroker, ServiceSchema } from 'moleculer';
import type { LeaderJobs } from '../../cluster/leader-jobs.ts';
import { declaredRoutes } from '../auth/access.ts';
import { ConfigError } from '../errors.ts';
import type { Runtime } from '../runtime.ts';
import type { PluginCapability, PluginDefinition, PluginPanel, PluginSettingsSection } from './contract.ts';
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
}

/** A site-dashboard panel as the dashboard gets it: the plugin's descriptor with the route's full path. */
export type SitePanel = PluginPanel & { plugin: string; route: string };
/** A site-settings section as the dashboard gets it, its routes in full (`{site}` for the site's id). */
export type SiteSettingsSection = Omit<PluginSettingsSection, 'actions'> & {
  plugin: string;
  route: string;
  actions: { id: string; label: string; route: string; confirm?: string }[];
};

/** A plugin's page for instance administrators, its panels' routes in full. */
export interface AdminPage {
  plugin: string;
  title: string;
  nav_label: string;
  panels: SitePanel[];
}

export interface DashboardContributions {
  site_panels: SitePanel[];
  site_settings: SiteSettingsSection[];
  admin_pages: AdminPage[];
}

/** What the running plugins add to the dashboard; every descriptor must name routes its plugin serves, with the right methods. */
export function dashboardOf(plugins: readonly LoadedPlugin[], running: readonly RunningPlugin[]): DashboardContributions {
  const contributions: DashboardContributions = { site_panels: [], site_settings: [], admin_pages: [] };
  for (const { definition } of plugins) {
    const served = running.find((plugin) => plugin.name === definition.name)?.routes ?? [];
    const route = (what: string, path: string, ...methods: string[]) => {
      const full = what.startsWith('admin') ? `/api/plugins/${definition.name}${path}` : `/api/sites/:id/plugins/${definition.name}${path}`;
      const missing = methods.find((method) => !served.includes(`${method} ${full}`));
      if (missing) throw new Error(`plugin ${definition.name}: ${what} uses ${missing} ${full}, a route the plugin does not serve`);
      return full.replace(':id', '{site}');
    };
    for (const panel of definition.dashboard?.sitePanels ?? []) {
      contributions.site_panels.push({ ...panel, plugin: definition.name, route: route(`dashboard panel "${panel.id}"`, panel.path, 'GET') });
    }
    const page = definition.dashboard?.adminPage;
    if (page) {
      contributions.admin_pages.push({
        plugin: definition.name,
        title: page.title,
        nav_label: page.navLabel,
        panels: page.panels.map((panel) => ({ ...panel, plugin: definition.name, route: route(`admin page panel "${panel.id}"`, panel.path, 'GET') })),
      });
    }
    for (const section of definition.dashboard?.siteSettings ?? []) {
      contributions.site_settings.push({
        ...section,
        plugin: definition.name,
        route: route(`settings section "${section.id}"`, section.path, 'GET', 'PUT'),
        actions: (section.actions ?? []).map((button) => ({ id: button.id, label: button.label, confirm: button.confirm, route: route(`settings action "${button.id}"`, button.path, 'POST') })),
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

function checkService(definition: PluginDefinition, schema: ServiceSchema): string[] {
  const name = definition.name;
  if (schema.name !== `plugins.${name}` && !String(schema.name).startsWith(`plugins.${name}.`)) {
    throw new Error(`plugin ${name}: service "${schema.name}" must be named plugins.${name} or plugins.${name}.<part>`);
  }
  const routes: string[] = [];
  // The plugin's own declarations, read before the broker has seen them.
  const { actions: declared = {} } = schema;
  for (const [actionName, action] of Object.entries(declared)) {
    if (!action || typeof action !== 'object') continue;
    for (const route of declaredRoutes((action as { rest?: unknown }).rest)) {
      const problem = routeProblem(name, route);
      if (problem) throw new Error(`plugin ${name}: action ${actionName}'s ${problem}`);
      routes.push(route);
    }
  }
  return routes;
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
    for (const schema of contributed('services()', () => definition.services?.(host as never) ?? [])) {
      routes.push(...checkService(definition, schema));
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
    };
  });
}
