import { describe, expect, it } from '@jest/globals';
import { type PluginManifest, resolvePlugins } from '../../plugins/index.ts';

const archives: PluginManifest = {
  name: 'archives',
  description: 'test manifest',
  settingsSchema: { bucket: 'string|min:3', interval_hours: 'number|convert|integer|min:1|optional' },
  services: () => [],
};

describe('resolvePlugins', () => {
  it('enables a known plugin with settings read from PLUMB_<NAME>_*', () => {
    const [plugin] = resolvePlugins(['archives'], { PLUMB_ARCHIVES_BUCKET: 'backups', PLUMB_ARCHIVES_INTERVAL_HOURS: '6' }, [archives]);
    expect(plugin.settings).toEqual({ bucket: 'backups', interval_hours: 6 });
  });

  it('stops start-up on an unknown plugin, listing the available ones', () => {
    expect(() => resolvePlugins(['teleport'], {}, [archives])).toThrow('PLUMB_PLUGINS: unknown plugin "teleport" (available: archives)');
  });

  it('stops start-up on a bad or unknown plugin setting, naming it', () => {
    expect(() => resolvePlugins(['archives'], { PLUMB_ARCHIVES_BUCKET: 'x' }, [archives])).toThrow(/^PLUMB_ARCHIVES_BUCKET: /);
    expect(() => resolvePlugins(['archives'], { PLUMB_ARCHIVES_BUCKET: 'backups', PLUMB_ARCHIVES_COLOUR: 'red' }, [archives])).toThrow(/^PLUMB_ARCHIVES_COLOUR: /);
  });
});
