// What the source says about itself: comments, test titles, the README and docs/ describe the product's
// behaviour (or cite a public standard), never work-tracking references; and nothing in the
// code is exported that no file uses.
import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = new URL('../../', import.meta.url).pathname;
const SOURCE_DIRS = ['bin', 'cluster', 'lib', 'plugins', 'scripts', 'services', 'test', 'tracker', 'types', 'web/src'];
const SOURCE_FILE = /\.(ts|tsx|js|mjs|cjs|sql|css|html)$/;
const thisFile = relative(root, new URL(import.meta.url).pathname);

function sourceFiles(): { path: string; text: string }[] {
  const files: { path: string; text: string }[] = [];
  for (const dir of SOURCE_DIRS) {
    for (const entry of readdirSync(join(root, dir), { recursive: true, withFileTypes: true })) {
      if (!entry.isFile() || !SOURCE_FILE.test(entry.name)) continue;
      const path = relative(root, join(entry.parentPath, entry.name));
      files.push({ path, text: readFileSync(join(root, path), 'utf8') });
    }
  }
  files.push({ path: 'moleculer.config.ts', text: readFileSync(join(root, 'moleculer.config.ts'), 'utf8') });
  return files;
}

const files = sourceFiles();

describe('source and README wording', () => {
  // A reader of the code or the README has no access to a tracker or a design document: a
  // reference to one explains nothing.
  // `(spec: Section)` only counts in a comment: `(spec: SettingSpec)` is a parameter.
  const INTERNAL_REFERENCES = [/\bissue #?\d+/i, /\bthe spec\b/i, /\bspec says\b/i, /(\/\/|\/\*|^\s*\*|--).*\(spec:/i];

  it('names no tracker issue and no internal specification', () => {
    const found: string[] = [];
    const prose = ['README.md', ...readdirSync(join(root, 'docs')).map((name) => `docs/${name}`)].filter((path) => path.endsWith('.md'));
    const documents = [...files.filter((f) => f.path !== thisFile), ...prose.map((path) => ({ path, text: readFileSync(join(root, path), 'utf8') }))];
    for (const { path, text } of documents) {
      text.split('\n').forEach((line, i) => {
        if (INTERNAL_REFERENCES.some((pattern) => pattern.test(line))) found.push(`${path}:${i + 1}: ${line.trim()}`);
      });
    }
    expect(found).toEqual([]);
  });

  it('finds such a reference when one is written (the scan is not blind)', () => {
    expect(INTERNAL_REFERENCES.some((pattern) => pattern.test('// see issue 12'))).toBe(true);
    expect(INTERNAL_REFERENCES.some((pattern) => pattern.test("it('does what the spec says')"))).toBe(true);
    expect(INTERNAL_REFERENCES.some((pattern) => pattern.test('// Favicons (spec: Upstream rules)'))).toBe(true);
    expect(INTERNAL_REFERENCES.some((pattern) => pattern.test('// per RFC 9110, a 304 has no body'))).toBe(false);
    expect(INTERNAL_REFERENCES.some((pattern) => pattern.test('function coerce(spec: SettingSpec) {'))).toBe(false);
  });
});

describe('exports of the server, dashboard, tracker, scripts and test support', () => {
  it('are each used somewhere besides their own declaration', () => {
    const declaration = /^export (?:async )?(?:function|const|let|class|interface|type) ([A-Za-z_$][\w$]*)/gm;
    const modules = files.filter((f) => /^(lib|services|cluster|plugins|web\/src|tracker|scripts|test\/support)\//.test(f.path) && /\.tsx?$/.test(f.path));
    // How often each identifier occurs anywhere, its declaration included.
    const occurrences = new Map<string, number>();
    for (const { text } of files) for (const [word] of text.matchAll(/[A-Za-z_$][\w$]*/g)) occurrences.set(word, (occurrences.get(word) ?? 0) + 1);
    const unused: string[] = [];
    for (const { path, text } of modules) {
      for (const [, name] of text.matchAll(declaration)) if ((occurrences.get(name) ?? 0) < 2) unused.push(`${path}: ${name}`);
    }
    expect(unused).toEqual([]);
  });
});
