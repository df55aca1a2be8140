// A node that never serves MCP never loads its SDK: the modules a node imports at start (every
// static import reachable from lib/node.ts) include neither the SDK nor zod, which only
// lib/mcp/endpoint.ts's dynamic import of lib/mcp/server.ts brings in.
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

const root = new URL('../../', import.meta.url).pathname;
/** `import … from '…'` and `export … from '…'`, but not `import type` (erased) nor `import(…)`. */
const STATIC_IMPORT = /^(?:import|export)\s+(?!type\s)[^'"]*?from\s+'([^']+)'|^import\s+'([^']+)'/gm;

/** The project files and the packages a module reaches through static imports. */
function staticGraph(entry: string): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    for (const match of readFileSync(join(root, file), 'utf8').matchAll(STATIC_IMPORT)) {
      const specifier = match[1] ?? match[2];
      if (specifier.startsWith('.')) visit(relative(root, join(root, dirname(file), specifier)));
      else if (!specifier.startsWith('node:')) packages.add(specifier);
    }
  };
  visit(entry);
  return { files, packages };
}

describe('the MCP server at a node’s start', () => {
  const { files, packages } = staticGraph('lib/node.ts');

  it('mounts /mcp and its tools', () => {
    expect(files).toContain('lib/mcp/endpoint.ts');
    expect(files).toContain('services/mcp.service.ts');
  });

  it('loads neither the MCP SDK nor zod, nor the modules that import them', () => {
    expect([...packages].filter((name) => name.startsWith('@modelcontextprotocol/') || name === 'zod')).toEqual([]);
    expect([...files].filter((file) => file === 'lib/mcp/server.ts' || file === 'lib/mcp/tools.ts')).toEqual([]);
  });
});
