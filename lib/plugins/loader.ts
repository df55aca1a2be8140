// Finding and checking the plugins `-plugins` names: a first-party name (`archives`), an npm package
// (`@acme/plumb-plugin-x`) or a path (`./plugins/mine`, `/opt/plumb/mine/index.ts`). Each module's
// default export is a plugin definition; anything that does not hold up (not a plugin, an API
// version this Plumb does not support, a bad name, a name taken twice or clashing with Plumb's own
// settings) stops start-up with a ConfigError naming it, which the CLI turns into exit 2.
import { existsSync, statSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { envName } from '../brand.ts';
import { SETTINGS } from '../config.ts';
import { ConfigError } from '../errors.ts';
import { PLUGIN_CAPABILITIES, PLUGIN_NAME, type PluginDefinition, pluginKey, SUPPORTED_PLUGIN_API_VERSIONS } from './contract.ts';

/** Plugins shipped with Plumb, by name: each a module whose default export is its definition. */
export type FirstPartyPlugins = Readonly<Record<string, () => Promise<{ default: unknown }>>>;

export interface LoadedPlugin {
  definition: PluginDefinition;
  /** How `-plugins` named it. */
  specifier: string;
}

const isPath = (specifier: string) => specifier.startsWith('.') || isAbsolute(specifier);

/** The module a path names: a file, or a folder's index.ts / index.js. */
function moduleOfPath(specifier: string, cwd: string): string {
  const path = resolve(cwd, specifier);
  if (!existsSync(path)) throw new ConfigError(envName('PLUGINS'), `plugin "${specifier}" not found (no file or folder at ${path})`);
  if (!statSync(path).isDirectory()) return path;
  const index = ['index.ts', 'index.js', 'index.mjs'].map((name) => join(path, name)).find((file) => existsSync(file));
  if (!index) throw new ConfigError(envName('PLUGINS'), `plugin folder "${specifier}" has no index.ts or index.js`);
  return index;
}

async function importPlugin(specifier: string, cwd: string, firstParty: FirstPartyPlugins): Promise<unknown> {
  const from = Object.hasOwn(firstParty, specifier) ? firstParty[specifier] : undefined;
  try {
    if (from) return (await from()).default;
    if (isPath(specifier)) return ((await import(pathToFileURL(moduleOfPath(specifier, cwd)).href)) as { default?: unknown }).default;
    return ((await import(specifier)) as { default?: unknown }).default;
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    const code = (err as { code?: string }).code;
    const known = Object.keys(firstParty).join(', ') || 'none';
    if ((code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && !isPath(specifier)) {
      throw new ConfigError(envName('PLUGINS'), `unknown plugin "${specifier}": not one of Plumb's (${known}) and no installed package of that name`);
    }
    throw new ConfigError(envName('PLUGINS'), `plugin "${specifier}" could not be loaded: ${(err as Error).message}`);
  }
}

/** Why a default export is not a plugin this Plumb can run, or null when it is one. */
export function definitionProblem(value: unknown): string | null {
  if (!value || typeof value !== 'object') return 'its module does not default-export definePlugin({...})';
  const d = value as Partial<PluginDefinition>;
  if (typeof d.name !== 'string' || !PLUGIN_NAME.test(d.name)) return `its name ${JSON.stringify(d.name)} is not 2 to 32 lower-case letters, digits and dashes`;
  if (typeof d.version !== 'string' || d.version === '') return 'it declares no version';
  if (!SUPPORTED_PLUGIN_API_VERSIONS.includes(d.apiVersion as number)) {
    return `it targets plugin API version ${JSON.stringify(d.apiVersion)}, and this Plumb supports ${SUPPORTED_PLUGIN_API_VERSIONS.join(', ')}`;
  }
  if (typeof d.description !== 'string') return 'it declares no description';
  // Its env names must not be Plumb's own: PLUMB_WEBHOOK_* belongs to the webhooks, not to a plugin "webhook".
  const prefix = envName(`${pluginKey(d.name).toUpperCase()}_`);
  const clash = SETTINGS.flatMap((spec) => spec.env).find((name) => name.startsWith(prefix));
  if (clash) return `its name "${d.name}" would give its settings the names of Plumb's own (${clash})`;
  for (const event of d.webhookEvents ?? []) {
    if (typeof event?.type !== 'string' || !new RegExp(`^${d.name}\\.[a-z][a-z0-9_.]*$`).test(event.type)) return `its webhook event ${JSON.stringify(event?.type)} is not "${d.name}.<lower-case words>"`;
    if (event.scope !== 'site' && event.scope !== 'instance') return `its webhook event "${event.type}" has scope ${JSON.stringify(event.scope)}, not site or instance`;
    if (event.scope === 'site' && !event.fields?.includes('site_id')) return `its site webhook event "${event.type}" does not list site_id among its fields`;
  }
  const unknownCapability = (d.capabilities ?? []).find((capability) => !PLUGIN_CAPABILITIES.includes(capability));
  if (unknownCapability !== undefined) return `it asks for the capability ${JSON.stringify(unknownCapability)}, and this Plumb grants only ${PLUGIN_CAPABILITIES.join(', ')}`;
  for (const scope of d.scopes ?? []) {
    if (typeof scope?.name !== 'string' || !new RegExp(`^${d.name}:[a-z][a-z0-9-]*$`).test(scope.name)) return `its scope ${JSON.stringify(scope?.name)} is not "${d.name}:<lower-case word>"`;
  }
  return null;
}

/** Loads every plugin `-plugins` names, in order; each name once. */
export async function loadPlugins(specifiers: readonly string[], options: { cwd: string; firstParty: FirstPartyPlugins }): Promise<LoadedPlugin[]> {
  const loaded: LoadedPlugin[] = [];
  for (const specifier of specifiers) {
    const definition = await importPlugin(specifier, options.cwd, options.firstParty);
    const problem = definitionProblem(definition);
    if (problem) throw new ConfigError(envName('PLUGINS'), `plugin "${specifier}" cannot be used: ${problem}`);
    const plugin = definition as PluginDefinition;
    const twin = loaded.find((other) => other.definition.name === plugin.name);
    if (twin) throw new ConfigError(envName('PLUGINS'), `plugins "${twin.specifier}" and "${specifier}" are both named "${plugin.name}"`);
    loaded.push({ definition: plugin, specifier });
  }
  return loaded;
}
