// `plumb --help` for plugins: the settings of every plugin Plumb ships, and of the plugins the
// command line or env enables by package or path, each with its flag, env name and default.
import { envName } from '../brand.ts';
import { parseArgs } from '../config.ts';
import { FIRST_PARTY_PLUGINS } from '../../plugins/index.ts';
import { type FirstPartyPlugins, loadPlugins } from './loader.ts';
import { pluginSettingRows } from './settings.ts';

export async function pluginHelpText(argv: readonly string[], env: NodeJS.ProcessEnv, options: { cwd?: string; firstParty?: FirstPartyPlugins } = {}): Promise<string> {
  const firstParty = options.firstParty ?? FIRST_PARTY_PLUGINS;
  // Only -plugins matters here; the rest of the command line is judged when the node starts.
  const listed = parseArgs(argv, { allowUnknown: true }).flags.get('plugins') ?? env[envName('PLUGINS')] ?? '';
  const named = listed
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  const specifiers = [...new Set([...Object.keys(firstParty), ...named])];
  if (specifiers.length === 0) return '';
  const plugins = await loadPlugins(specifiers, { cwd: options.cwd ?? process.cwd(), firstParty });
  const lines = ['', 'Plugin settings (enable plugins with -plugins; flag, then env, then default):'];
  for (const { definition } of plugins) {
    lines.push(`  ${definition.name} ${definition.version}: ${definition.description}`);
    const rows = pluginSettingRows(definition);
    if (rows.length === 0) lines.push('      (no settings)');
    for (const row of rows) lines.push(`  -${row.flag}`, `      env ${row.env}; default ${row.default}`, `      ${row.description}`);
  }
  return `${lines.join('\n')}\n`;
}
