// Prints the README's settings tables: Plumb's own from lib/config.ts, and those of the plugins it
// ships from their definitions, so the documentation is generated from what the loaders read:
// `node scripts/settings-table.ts` (Plumb's), `node scripts/settings-table.ts archives` (a plugin's).
import { SETTINGS } from '../lib/config.ts';
import type { PluginDefinition } from '../lib/plugins/contract.ts';
import { pluginSettingRows } from '../lib/plugins/settings.ts';
import { FIRST_PARTY_PLUGINS } from '../plugins/index.ts';

const cell = (text: string) => text.replace(/\|/g, '\\|');
const HEADER = ['| flag | env | default | meaning |', '| --- | --- | --- | --- |'];

export function settingsTable(): string {
  const rows = SETTINGS.map((s) => {
    const def = s.default === undefined || (Array.isArray(s.default) && s.default.length === 0) ? '(unset)' : `\`${String(s.default)}\``;
    return `| \`-${s.flag}\` | ${s.env.map((e) => `\`${e}\``).join(', ')} | ${def} | ${cell(s.description)} |`;
  });
  return [...HEADER, ...rows].join('\n');
}

/** A first-party plugin's settings, as `plumb --help` lists them. */
export async function pluginSettingsTable(name: string): Promise<string> {
  const load = FIRST_PARTY_PLUGINS[name];
  if (!load) throw new Error(`no first-party plugin ${name} (there are: ${Object.keys(FIRST_PARTY_PLUGINS).join(', ')})`);
  const definition = (await load()).default as PluginDefinition;
  const rows = pluginSettingRows(definition).map((row) => {
    const def = row.default.startsWith('(') ? row.default : `\`${row.default}\``;
    return `| \`-${row.flag}\` | \`${row.env}\` | ${def} | ${cell(row.description)} |`;
  });
  return [...HEADER, ...rows].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(process.argv[2] ? await pluginSettingsTable(process.argv[2]) : settingsTable());
