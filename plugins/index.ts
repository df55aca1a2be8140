// The registry of optional features (PLUMB_PLUGINS=name,…). Each plugin is a folder with an
// index.ts manifest: a fastest-validator schema for its settings, its services and leader-only jobs.
import type { ServiceSchema } from 'moleculer';
import { envName } from '../lib/brand.ts';
import { ConfigError } from '../lib/errors.ts';
import type { Runtime } from '../lib/runtime.ts';
import { compileChecker } from '../lib/validation.ts';

export interface PluginManifest {
  name: string;
  description: string;
  /** fastest-validator schema of the plugin's settings, read from env PLUMB_<NAME>_<KEY>. */
  settingsSchema: Record<string, unknown>;
  services(runtime: Runtime, settings: Record<string, unknown>): ServiceSchema[];
  leaderJobs?(runtime: Runtime, settings: Record<string, unknown>): { name: string; start(epoch: number): Promise<void> | void; stop(): Promise<void> | void }[];
}

/** Plugins shipped with Plumb; later features register here (ai, search-console, archives). */
export const AVAILABLE_PLUGINS: readonly PluginManifest[] = [];

export interface EnabledPlugin {
  manifest: PluginManifest;
  settings: Record<string, unknown>;
}

/** Resolves and validates the enabled plugins; an unknown name or bad setting stops start-up. */
export function resolvePlugins(names: readonly string[], env: NodeJS.ProcessEnv, available: readonly PluginManifest[] = AVAILABLE_PLUGINS): EnabledPlugin[] {
  return names.map((name) => {
    const manifest = available.find((p) => p.name === name);
    if (!manifest) {
      const known = available.map((p) => p.name).join(', ') || 'none yet';
      throw new ConfigError(envName('PLUGINS'), `unknown plugin "${name}" (available: ${known})`);
    }
    const prefix = envName(`${name.toUpperCase().replace(/-/g, '_')}_`);
    const settings: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(env)) {
      if (key.startsWith(prefix) && value !== undefined) settings[key.slice(prefix.length).toLowerCase()] = value;
    }
    const issues = compileChecker({ $$strict: true, ...manifest.settingsSchema })(settings);
    if (issues.length > 0) {
      // An unknown key ($$strict) and a bad value alike are named in `field`.
      const key = issues[0].field;
      throw new ConfigError(`${prefix}${key.toUpperCase()}`, issues.map((i) => i.message).join('; '));
    }
    return { manifest, settings };
  });
}
