// Loading plugins as -plugins names them (first-party name, package, path), checking what they
// declare (name, version, plugin API version), and their settings from flags and env: everything
// that does not hold up stops start-up with a ConfigError naming it (the CLI exits 2).
import { describe, expect, it } from '@jest/globals';
import { loadConfig } from '../../lib/config.ts';
import { ConfigError } from '../../lib/errors.ts';
import { definePlugin, PLUGIN_API_VERSION } from '../../lib/plugins/api.ts';
import { definitionProblem, loadPlugins } from '../../lib/plugins/loader.ts';
import { settlePluginSettings } from '../../lib/plugins/register.ts';
import { pluginSettingRows, resolvePluginSettings } from '../../lib/plugins/settings.ts';

const archives = definePlugin({
  name: 'archives',
  version: '1.2.0',
  apiVersion: PLUGIN_API_VERSION,
  description: 'Backups',
  settings: {
    interval_hours: { type: 'int', default: 24, min: 1, max: 720, description: 'Hours between backups.' },
    target: { type: 'enum', values: ['local', 's3'], default: 'local', description: 'Where backups go.' },
    s3_secret: { type: 'string', secret: true, description: 'Secret key.' },
    bucket: { type: 'string', required: true, description: 'Bucket name.' },
    verify: { type: 'bool', default: true, description: 'Read each backup back.' },
  },
});
const firstParty = { archives: async () => ({ default: archives }) };
const cwd = process.cwd();

describe('loading plugins', () => {
  it('loads a first-party plugin by name and a third party’s by path', async () => {
    const loaded = await loadPlugins(['archives', './plugins/examples/notes'], { cwd, firstParty });
    expect(loaded.map((p) => [p.specifier, p.definition.name, p.definition.version])).toEqual([
      ['archives', 'archives', '1.2.0'],
      ['./plugins/examples/notes', 'notes', '1.0.0'],
    ]);
  });

  it('names an unknown plugin, a missing path and a name taken twice', async () => {
    await expect(loadPlugins(['teleport'], { cwd, firstParty })).rejects.toThrow('PLUMB_PLUGINS: unknown plugin "teleport": not one of Plumb\'s (archives) and no installed package of that name');
    await expect(loadPlugins(['./nowhere/at-all'], { cwd, firstParty })).rejects.toThrow(/PLUMB_PLUGINS: plugin ".\/nowhere\/at-all" not found/);
    await expect(loadPlugins(['archives', 'archives'], { cwd, firstParty })).rejects.toThrow('plugins "archives" and "archives" are both named "archives"');
  });

  it('refuses a plugin API version it does not support, naming both', () => {
    expect(definitionProblem({ ...archives, apiVersion: 7 })).toBe('it targets plugin API version 7, and this Plumb supports 1');
  });

  it('refuses what is not a plugin, a bad name, no version, and a name that would take Plumb’s own settings', () => {
    expect(definitionProblem(undefined)).toBe('its module does not default-export definePlugin({...})');
    expect(definitionProblem({ ...archives, name: 'Archives!' })).toMatch(/^its name "Archives!" is not/);
    expect(definitionProblem({ ...archives, name: 'a' })).toBe('its name "a" is not 2 to 32 lower-case letters, digits and dashes');
    expect(definitionProblem({ ...archives, name: 'ai' })).toBeNull();
    expect(definitionProblem({ ...archives, version: '' })).toBe('it declares no version');
    expect(definitionProblem({ ...archives, name: 'webhook' })).toBe('its name "webhook" would give its settings the names of Plumb\'s own (PLUMB_WEBHOOK_DELIVERY_CONCURRENCY)');
    expect(definitionProblem({ ...archives, scopes: [{ name: 'backups:read', description: 'x' }] })).toBe('its scope "backups:read" is not "archives:<lower-case word>"');
    expect(definitionProblem({ ...archives, webhookEvents: [{ type: 'backup.done', scope: 'instance', description: 'x', fields: [] }] })).toBe(
      'its webhook event "backup.done" is not "archives.<lower-case words>"',
    );
    expect(definitionProblem({ ...archives, webhookEvents: [{ type: 'archives.done', scope: 'site', description: 'x', fields: ['x'] }] })).toBe(
      'its site webhook event "archives.done" does not list site_id among its fields',
    );
    expect(definitionProblem(archives)).toBeNull();
  });
});

describe('plugin settings', () => {
  it('reads flags before env before defaults, typed', () => {
    const flags = new Map([['archives-interval-hours', '6']]);
    const settings = resolvePluginSettings(archives, { PLUMB_ARCHIVES_INTERVAL_HOURS: '12', PLUMB_ARCHIVES_BUCKET: 'backups', PLUMB_ARCHIVES_VERIFY: 'off' }, flags);
    expect(settings).toEqual({ interval_hours: 6, target: 'local', bucket: 'backups', verify: false });
    expect(flags.size).toBe(0);
  });

  it('stops start-up on a bad value, a missing required setting, and an unknown one, naming each', () => {
    const run = (env: Record<string, string>, flags: [string, string][] = []) => () => resolvePluginSettings(archives, { PLUMB_ARCHIVES_BUCKET: 'b', ...env }, new Map(flags));
    expect(run({ PLUMB_ARCHIVES_INTERVAL_HOURS: '0' })).toThrow('PLUMB_ARCHIVES_INTERVAL_HOURS: must be at least 1 (got "0")');
    expect(run({ PLUMB_ARCHIVES_TARGET: 'ftp' })).toThrow('PLUMB_ARCHIVES_TARGET: must be one of local, s3 (got "ftp")');
    expect(run({ PLUMB_ARCHIVES_COLOUR: 'red' })).toThrow(/^PLUMB_ARCHIVES_COLOUR: the archives plugin has no such setting/);
    expect(run({}, [['archives-colour', 'red']])).toThrow('-archives-colour: the archives plugin has no such setting (see plumb --help)');
    expect(() => resolvePluginSettings(archives, {}, new Map())).toThrow('PLUMB_ARCHIVES_BUCKET: is required by the archives plugin: Bucket name.');
    expect(() => resolvePluginSettings(archives, {}, new Map())).toThrow(ConfigError);
  });

  it('never echoes a secret in an error', () => {
    const secretInt = definePlugin({ name: 'archives', version: '1', apiVersion: PLUGIN_API_VERSION, description: 'd', settings: { key: { type: 'int', secret: true, description: 'k' } } });
    expect(() => resolvePluginSettings(secretInt, { PLUMB_ARCHIVES_KEY: 'hunter2' }, new Map())).toThrow('PLUMB_ARCHIVES_KEY: must be an integer (got a hidden value)');
  });

  it('lists each setting with its flag, env name and default for the help', () => {
    expect(pluginSettingRows(archives)[0]).toEqual({ flag: 'archives-interval-hours', env: 'PLUMB_ARCHIVES_INTERVAL_HOURS', default: '24', description: 'Hours between backups.' });
    expect(pluginSettingRows(archives).find((row) => row.env === 'PLUMB_ARCHIVES_BUCKET')?.default).toBe('(required)');
  });
});

describe('flags on the command line', () => {
  it('refuses a flag that is not Plumb’s when no plugin is enabled', () => {
    expect(() => loadConfig({ argv: ['serve', '-archives-bucket', 'x'], env: {} })).toThrow('-archives-bucket: unknown flag (see plumb --help)');
  });

  it('leaves a flag that is not Plumb’s to the enabled plugins, and refuses one no plugin claims', () => {
    const config = loadConfig({ argv: ['serve', '-plugins', 'archives', '-archives-bucket', 'x', '-archives-verify'], env: {} });
    expect([...config.pluginFlags]).toEqual([
      ['archives-bucket', 'x'],
      ['archives-verify', 'true'],
    ]);
    const loaded = [{ definition: archives, specifier: 'archives' }];
    expect(settlePluginSettings(loaded, {}, config.pluginFlags).get('archives')).toMatchObject({ bucket: 'x', verify: true });
    expect(() => settlePluginSettings(loaded, { PLUMB_ARCHIVES_BUCKET: 'x' }, new Map([['colour-me', 'red']]))).toThrow('-colour-me: unknown flag: neither a setting of Plumb nor of an enabled plugin');
  });
});
