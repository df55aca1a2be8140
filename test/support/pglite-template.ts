// Test support: a new PGlite database, made once by the product's own first-start path and kept as
// a template, copied into a fresh test data dir so the store opening there finds a database
// (PG_VERSION) instead of running initdb, which costs seconds of CPU each time. Tests of the first
// start itself keep an empty data dir.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closeToOthers } from '../../lib/data-dir-lock.ts';
import { silentLog } from '../../lib/log.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const PGLITE_VERSION = (JSON.parse(readFileSync(join(ROOT, 'node_modules/@electric-sql/pglite/package.json'), 'utf8')) as { version: string }).version;

/**
 * Kept across runs: what a PGlite version's initdb makes does not change, and an upgrade names a
 * new template. The user id keeps another user's template (closed to us, or planted) out of the way.
 */
const PGLITE_TEMPLATE_DIR = join(tmpdir(), `plumb-test-pglite-${PGLITE_VERSION}-uid${process.getuid?.() ?? 0}`);

let made: Promise<void> | undefined;

function templateMade(): Promise<void> {
  made ??= makeTemplate().catch((err: unknown) => {
    made = undefined;
    throw err;
  });
  return made;
}

/**
 * A first start in a scratch data dir (initdb in a child, opened, closed to others, closed), its
 * `meta` then renamed into place whole: a process racing this one sees no template or a whole one.
 */
async function makeTemplate(): Promise<void> {
  if (existsSync(join(PGLITE_TEMPLATE_DIR, 'PG_VERSION'))) return;
  const scratch = mkdtempSync(`${PGLITE_TEMPLATE_DIR}.making-`);
  try {
    // Imported only here: it sets V8's wasm flags for the whole process, which a test process that
    // merely copies the template has no reason to take.
    const { openPglite } = await import('../../lib/stores/metadata/pglite.ts');
    await (await openPglite({ dataDir: scratch, log: silentLog })).close();
    renameSync(join(scratch, 'meta'), PGLITE_TEMPLATE_DIR);
  } catch (err) {
    // Another process moved its template into place first: as good as ours.
    if (!existsSync(join(PGLITE_TEMPLATE_DIR, 'PG_VERSION'))) throw err;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * Puts a new, unmigrated PGlite database in `<dataDir>/meta`, as a first start would leave it
 * before its migrations. Refuses a data dir that has a `meta` already.
 */
export async function copyPgliteTemplate(dataDir: string): Promise<void> {
  await templateMade();
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const meta = join(dataDir, 'meta');
  if (existsSync(meta)) throw new Error(`${meta} exists: the PGlite template goes only into a data dir without one`);
  cpSync(PGLITE_TEMPLATE_DIR, meta, { recursive: true, errorOnExist: true, force: false });
  // cpSync makes its folders by the umask; the product keeps meta to its owner, files and folders.
  closeToOthers(meta);
}
