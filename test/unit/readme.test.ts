// The README is for operators: its settings table must be the one the loader reads.
import { describe, expect, it } from '@jest/globals';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { helpText, loadConfig, parseArgs, SETTINGS } from '../../lib/config.ts';
import { pluginSettingsTable, settingsTable } from '../../scripts/settings-table.ts';
import { FIRST_PARTY_PLUGINS } from '../../plugins/index.ts';
import aiPlugin from '../../plugins/ai/index.ts';
import archivesPlugin from '../../plugins/archives/index.ts';
import searchConsolePlugin from '../../plugins/search-console/index.ts';
import { CHROMIUM_PATH_ENV, LOCAL_SERVICES } from '../support/services.ts';
import { FORWARD_TOKEN_ENV } from '../../lib/forwarder/cli.ts';
import { pluginSettingRows } from '../../lib/plugins/settings.ts';
import notesPlugin from '../../plugins/examples/notes/index.ts';

/** The settings of the plugins the README shows (the ones Plumb ships, and the example), as the help would list them. */
const pluginSettings = [...pluginSettingRows(notesPlugin), ...pluginSettingRows(archivesPlugin), ...pluginSettingRows(aiPlugin), ...pluginSettingRows(searchConsolePlugin)];

const root = new URL('../../', import.meta.url).pathname;
const readmeText = readFileSync(join(root, 'README.md'), 'utf8');
const packageJson = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string>; bin: Record<string, string> };

/** The README's settings table, read as an operator reads it: flag, env names, default. */
function documentedSettings(): Map<string, { env: string[]; default: string }> {
  const table = /<!-- settings table[^\n]*-->\n([\s\S]*?)\n<!-- end of settings table -->/.exec(readmeText)?.[1] ?? '';
  const rows = new Map<string, { env: string[]; default: string }>();
  for (const line of table.split('\n').slice(2)) {
    const [flag, env, def] = line.split(' | ').map((cell) => cell.replace(/^\| /, ''));
    rows.set(flag.replace(/^`-|`$/g, ''), { env: env.split(', ').map((name) => name.replace(/`/g, '')), default: def });
  }
  return rows;
}

/** The shell examples: every ```sh block, one string each. */
const shellBlocks = () => [...readmeText.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]);

describe('README', () => {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

  it('documents every setting exactly as lib/config.ts declares it', () => {
    const table = /<!-- settings table[^\n]*-->\n([\s\S]*?)\n<!-- end of settings table -->/.exec(readme)?.[1];
    expect(table).toBe(settingsTable());
  });

  it('documents the settings of every plugin Plumb ships, as its definition declares them', async () => {
    for (const name of Object.keys(FIRST_PARTY_PLUGINS)) {
      const table = new RegExp(`<!-- ${name} settings table[^\\n]*-->\\n([\\s\\S]*?)\\n<!-- end of ${name} settings table -->`).exec(readme)?.[1];
      expect({ name, table }).toEqual({ name, table: await pluginSettingsTable(name) });
    }
  });

  it('opens with the quick start: the two set-up commands first', () => {
    const firstSection = /^## (.+)$/m.exec(readme)?.[1];
    expect(firstSection).toBe('Quick start');
    const quickStart = readme.slice(readme.indexOf('## Quick start'), readme.indexOf('\n## ', readme.indexOf('## Quick start') + 1));
    expect(quickStart).toContain('npm ci && npm start');
    expect(quickStart).toContain('npm ci && npm test');
    expect(quickStart).toContain('npx plumb --help');
  });

  it('links benchmarks and architecture in docs/, and every relative link resolves', () => {
    expect(readme).toContain('(docs/benchmarks.md)');
    expect(readme).toContain('(docs/architecture.md)');
    const root = new URL('../../', import.meta.url).pathname;
    for (const doc of ['README.md', 'docs/architecture.md', 'docs/benchmarks.md', 'docs/decisions.md']) {
      const text = readFileSync(join(root, doc), 'utf8');
      const links = [...text.matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)].map((m) => m[1]).filter((link) => !/^[a-z]+:/.test(link));
      for (const link of links) expect({ doc, link, exists: existsSync(join(root, dirname(doc), link)) }).toEqual({ doc, link, exists: true });
    }
  });
});

describe('README configuration, against the loader', () => {
  const documented = documentedSettings();

  it('has a row for every setting with its env names and default', () => {
    for (const spec of SETTINGS) {
      const def = spec.default === undefined || (Array.isArray(spec.default) && spec.default.length === 0) ? '(unset)' : `\`${String(spec.default)}\``;
      expect({ flag: spec.flag, row: documented.get(spec.flag) }).toEqual({ flag: spec.flag, row: { env: [...spec.env], default: def } });
    }
  });

  it('lists no flag the loader would refuse', () => {
    expect(documented.size).toBe(SETTINGS.length);
    for (const flag of documented.keys()) expect(() => parseArgs([`-${flag}=1`])).not.toThrow();
  });

  it('mentions only env names the loader, the forwarder or the test suites read', () => {
    const known = new Set<string>([
      ...SETTINGS.flatMap((spec) => spec.env),
      ...pluginSettings.map((row) => row.env),
      ...LOCAL_SERVICES.map((service) => service.env),
      CHROMIUM_PATH_ENV,
      FORWARD_TOKEN_ENV,
    ]);
    const mentioned = new Set(readmeText.match(/\bPLUMB_[A-Z0-9_]+\b/g));
    expect([...mentioned].filter((name) => !known.has(name))).toEqual([]);
  });

  it('gives shell examples the loader accepts', () => {
    for (const block of shellBlocks()) {
      const env = Object.fromEntries([...block.matchAll(/\b(PLUMB_[A-Z0-9_]+)=(\S+)/g)].map((m) => [m[1], m[2]]));
      const flags = [...block.matchAll(/npm start -- (.+)/g)].flatMap((m) => m[1].trim().split(/\s+/));
      expect(() => loadConfig({ argv: ['serve', ...flags], env })).not.toThrow();
    }
    // The flag spellings of the Configuration section.
    for (const [, example] of readmeText.matchAll(/`(--?[a-z-]+[ =]\d+)`/g)) {
      const name = example.replace(/^--?/, '').split(/[ =]/)[0];
      if (pluginSettings.some((row) => row.flag === name)) continue;
      expect(() => parseArgs(example.split(' '))).not.toThrow();
    }
  });
});

describe('README commands, against package.json and the CLI', () => {
  it('runs only npm scripts that package.json defines', () => {
    const scripts = [...readmeText.matchAll(/`[^`]*?\bnpm (?:run ([\w:-]+)|(start|test))\b/g), ...shellBlocks().flatMap((b) => [...b.matchAll(/\bnpm (?:run ([\w:-]+)|(start|test))\b/g)])].map((m) => m[1] ?? m[2]);
    expect(scripts.length).toBeGreaterThan(5);
    for (const script of new Set(scripts)) expect({ script, defined: script in packageJson.scripts }).toEqual({ script, defined: true });
  });

  it('calls plumb only with commands it has, and plumb is the package\'s command', () => {
    expect(existsSync(join(root, packageJson.bin.plumb))).toBe(true);
    const commands = /Commands:\n((?: {2}\S.*\n)+)/.exec(helpText())![1].split('\n').filter(Boolean).map((line) => line.trim().split(/\s+/)[0]);
    // `plumb serve` in prose, `npx plumb --help` at the start of a shell line.
    const calls = [...readmeText.matchAll(/(?:^|`)(?:npx )?plumb (-{0,2}[a-z][a-z-]*)/gm)].map((m) => m[1]);
    expect(calls.length).toBeGreaterThan(2);
    for (const word of calls) {
      if (word.startsWith('-')) expect(parseArgs([word]).help).toBe(true);
      else expect({ word, known: commands.includes(word) }).toEqual({ word, known: true });
    }
  });

  it('names scripts and test files that exist', () => {
    const paths = [...readmeText.matchAll(/\b((?:scripts|test|bin|lib)\/[\w./-]+\.ts)\b/g)].map((m) => m[1]);
    expect(paths.length).toBeGreaterThan(2);
    for (const path of new Set(paths)) expect({ path, exists: existsSync(join(root, path)) }).toEqual({ path, exists: true });
  });
});
