// A plugin's settings, read like Plumb's own: from `-<plugin>-<key>` flags, else `PLUMB_<PLUGIN>_<KEY>`
// env, else the declared default, each checked against its declaration at start, so a bad value
// stops the node (exit 2) naming the flag or variable. Secrets are never echoed in an error.
import { envName } from '../brand.ts';
import { coerceSetting } from '../config.ts';
import { ConfigError } from '../errors.ts';
import { type PluginDefinition, type PluginSettingSpec, pluginKey } from './contract.ts';

const settingKey = (key: string) => key.replace(/_/g, '-');
export const pluginSettingEnv = (plugin: string, key: string) => envName(`${pluginKey(plugin)}_${key}`.toUpperCase().replace(/-/g, '_'));
export const pluginSettingFlag = (plugin: string, key: string) => `${plugin}-${settingKey(key)}`;

/** A raw value checked by the config loader's own rules; a plugin's `string` may also set a length. */
function coerce(spec: PluginSettingSpec, raw: string, source: string): string | number | boolean {
  if (spec.type === 'string') {
    if (spec.maxLength !== undefined && raw.length > spec.maxLength) {
      throw new ConfigError(source, `must be at most ${spec.maxLength} characters (got ${spec.secret ? 'a hidden value' : JSON.stringify(raw)})`);
    }
    return raw;
  }
  const declared = spec.type === 'url' ? { ...spec, schemes: spec.schemes ?? ['http:', 'https:'] } : spec;
  return coerceSetting(declared, spec.type === 'url' ? raw : raw.trim(), source) as string | number | boolean;
}

/**
 * The plugin's settings from flags (by flag name, without dashes in front) and env. Flags and env
 * variables under the plugin's prefix that name no declared setting are refused, so a typo does
 * not silently leave a default in place. Consumes the flags it reads from `flags`.
 */
export function resolvePluginSettings(definition: PluginDefinition, env: NodeJS.ProcessEnv, flags: Map<string, string>): Record<string, unknown> {
  const specs = definition.settings ?? {};
  const settings: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(specs)) {
    const flag = pluginSettingFlag(definition.name, key);
    const variable = pluginSettingEnv(definition.name, key);
    const fromFlag = flags.get(flag);
    flags.delete(flag);
    const fromEnv = env[variable];
    if (fromFlag !== undefined) settings[key] = coerce(spec, fromFlag, `-${flag}`);
    else if (fromEnv !== undefined && fromEnv !== '') settings[key] = coerce(spec, fromEnv, variable);
    else if (spec.default !== undefined) settings[key] = spec.default;
    else if (spec.required) throw new ConfigError(variable, `is required by the ${definition.name} plugin: ${spec.description}`);
  }
  const known = new Set<string>(Object.keys(specs).map((key) => pluginSettingEnv(definition.name, key)));
  const prefix = envName(`${pluginKey(definition.name).toUpperCase()}_`);
  const stray = Object.keys(env).find((name) => name.startsWith(prefix) && !known.has(name) && env[name] !== undefined);
  if (stray) throw new ConfigError(stray, `the ${definition.name} plugin has no such setting (it has: ${[...known].join(', ') || 'none'})`);
  for (const flag of flags.keys()) {
    if (flag.startsWith(`${definition.name}-`)) throw new ConfigError(`-${flag}`, `the ${definition.name} plugin has no such setting (see plumb --help)`);
  }
  return settings;
}

/** The help and README rows of a plugin's settings: flag, env name, default, description. */
export function pluginSettingRows(definition: PluginDefinition): { flag: string; env: string; default: string; description: string }[] {
  return Object.entries(definition.settings ?? {}).map(([key, spec]) => ({
    flag: pluginSettingFlag(definition.name, key),
    env: pluginSettingEnv(definition.name, key),
    default: spec.default === undefined ? (spec.required ? '(required)' : '(unset)') : String(spec.default),
    description: spec.description,
  }));
}
