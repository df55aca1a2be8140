// Plumb runs on Moleculer's and moleculer-web's documented API only, so a new release of either
// cannot change its behaviour without a changelog entry: no private fields read or written, no
// gateway method replaced, no logger patched.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import ApiGateway from 'moleculer-web';
import { loadConfig } from '../../lib/config.ts';
import { silentLog } from '../../lib/log.ts';
import type { Runtime } from '../../lib/runtime.ts';
import createApiService from '../../services/api.service.ts';
import { tempDataDir } from '../support/instance.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const SOURCE_DIRS = ['bin', 'cluster', 'lib', 'plugins', 'services', 'types'];

/** What reaching into Moleculer's or moleculer-web's internals looks like in a source file. */
const INTERNALS: { pattern: RegExp; what: string }[] = [
  { pattern: /_trackedContexts/, what: "Moleculer's private context list" },
  { pattern: /\brawName\b/, what: "an action's private raw name" },
  { pattern: /schema\.actions\b/, what: "a service schema's action handlers, outside the broker's middlewares" },
  { pattern: /\blocalEndpoints\b|getActionEndpoints\b/, what: "the registry's endpoint internals" },
  { pattern: /\bhttpHandler\b/, what: "moleculer-web's request handler (its documented entry is express())" },
  { pattern: /ApiGateway\.methods\b/, what: "moleculer-web's methods, called or extended" },
  { pattern: /\blogger\.(?:fatal|error|warn|info|debug|trace)\s*=(?!=)/, what: 'a patched logger method' },
];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'node_modules' ? [] : sourceFiles(path);
    return /\.(ts|js|mjs)$/.test(name) ? [path] : [];
  });
}

describe('Plumb on Moleculer', () => {
  it('reads no private Moleculer or moleculer-web field and patches no logger in any source file', () => {
    const files = [...SOURCE_DIRS.flatMap((dir) => sourceFiles(join(ROOT, dir))), join(ROOT, 'moleculer.config.ts')];
    expect(files.length).toBeGreaterThan(50);
    const found: string[] = [];
    for (const file of files) {
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, index) => {
          for (const { pattern, what } of INTERNALS) if (pattern.test(line)) found.push(`${relative(ROOT, file)}:${index + 1}: ${what}`);
        });
    }
    expect(found).toEqual([]);
  });

  it('replaces none of moleculer-web\'s gateway methods', () => {
    const config = loadConfig({ env: { PLUMB_DATA_DIR: tempDataDir('plumb-public-api-'), PLUMB_LOG_LEVEL: 'silent' } });
    const schema = createApiService({ config, log: silentLog } as unknown as Runtime);
    const ours = Object.keys(schema.methods ?? {});
    const theirs = new Set(Object.keys(ApiGateway.methods ?? {}));
    expect(ours.length).toBeGreaterThan(0);
    expect(ours.filter((name) => theirs.has(name))).toEqual([]);
  });
});
