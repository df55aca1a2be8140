// The access model's roles live in lib/auth/roles.ts alone, so the auth modules can share them
// without importing each other's values in a circle (which leaves one of them half-loaded, its
// constants undefined, depending on which module a process happens to load first).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { INSTANCE_RANK, INSTANCE_ROLES, SITE_RANK, SITE_ROLES, TEAM_RANK, TEAM_ROLES } from '../../lib/auth/roles.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const AUTH = join(ROOT, 'lib/auth');

/** The auth modules a module imports values from (type-only imports leave nothing at run time). */
function valueImports(file: string): string[] {
  const source = readFileSync(join(AUTH, file), 'utf8');
  const found: string[] = [];
  for (const [, names, from] of source.matchAll(/^import\s+(?!type\s)([^;]*?)\s+from\s+'\.\/([\w-]+\.ts)';/gm)) {
    const specifiers = names.replace(/[{}]/g, '').split(',').map((s) => s.trim()).filter(Boolean);
    if (specifiers.some((s) => !s.startsWith('type '))) found.push(from);
  }
  return found;
}

/** Every TypeScript file under these folders, relative to the root. */
function sourceFiles(...folders: string[]): string[] {
  return folders.flatMap((folder) =>
    readdirSync(join(ROOT, folder), { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.ts'))
      .map((file) => join(folder, file)),
  );
}

describe('lib/auth/roles.ts', () => {
  it('lets no auth module reach itself again through value imports', () => {
    const modules = readdirSync(AUTH).filter((file) => file.endsWith('.ts'));
    const graph = new Map(modules.map((file) => [file, valueImports(file)]));
    const cycles: string[] = [];
    const visit = (file: string, path: string[]) => {
      for (const next of graph.get(file) ?? []) {
        if (next === path[0]) cycles.push([...path, next].join(' → '));
        else if (!path.includes(next)) visit(next, [...path, next]);
      }
    };
    for (const file of modules) visit(file, [file]);
    expect(cycles).toEqual([]);
    expect(valueImports('roles.ts')).toEqual([]);
  });

  it('is the one place a role, a scope or a rank is declared', () => {
    const declaration = /^export (type (SiteRole|TeamRole|InstanceRole|ApiScope) =|const (SITE_RANK|TEAM_RANK|INSTANCE_RANK|API_SCOPES)\b)/m;
    const declaring = sourceFiles('lib', 'services', 'cluster', 'plugins').filter((file) => declaration.test(readFileSync(join(ROOT, file), 'utf8')));
    expect(declaring).toEqual(['lib/auth/roles.ts']);
  });

  it('ranks each role list highest first', () => {
    expect(INSTANCE_ROLES.map((role) => INSTANCE_RANK[role])).toEqual([3, 2, 1]);
    expect(TEAM_ROLES.map((role) => TEAM_RANK[role])).toEqual([3, 2, 1]);
    expect(SITE_ROLES.map((role) => SITE_RANK[role])).toEqual([4, 3, 2, 1]);
  });
});
