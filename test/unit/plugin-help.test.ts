// `plumb --help` lists the settings of the plugins Plumb ships and of those -plugins or
// PLUMB_PLUGINS enables by package or path, each with its flag, env name and default.
import { describe, expect, it } from '@jest/globals';
import { definePlugin, PLUGIN_API_VERSION } from '../../lib/plugins/api.ts';
import { pluginHelpText } from '../../lib/plugins/help.ts';

const shipped = definePlugin({
  name: 'shipped',
  version: '2.0.0',
  apiVersion: PLUGIN_API_VERSION,
  description: 'A plugin Plumb ships',
  settings: { every_hours: { type: 'int', default: 24, description: 'Hours between runs.' } },
});
const firstParty = { shipped: async () => ({ default: shipped }) };

describe('plumb --help for plugins', () => {
  it('lists every shipped plugin’s settings, and a plugin named by path', async () => {
    const text = await pluginHelpText(['--help', '-plugins', './plugins/examples/notes'], {}, { firstParty });
    expect(text).toContain('  shipped 2.0.0: A plugin Plumb ships\n  -shipped-every-hours\n      env PLUMB_SHIPPED_EVERY_HOURS; default 24\n      Hours between runs.');
    expect(text).toContain('  notes 1.0.0: Notes on a site’s timeline, written by its editors\n  -notes-max-length\n      env PLUMB_NOTES_MAX_LENGTH; default 500');
  });

  it('reads the plugins from the env as the node does', async () => {
    expect(await pluginHelpText(['--help'], { PLUMB_PLUGINS: './plugins/examples/notes' }, { firstParty: {} })).toContain('-notes-prune-every-seconds');
  });

  it('says nothing when no plugin is shipped or named', async () => {
    expect(await pluginHelpText(['--help'], {}, { firstParty: {} })).toBe('');
  });
});
