// `plumb serve` keeps its data dir to its own user: started from a shell whose umask (022) would
// leave new files readable by everyone, nothing it creates under the data dir (embedded stores,
// ingest journal, JWT secret, lock, favicon cache) is open to group or others, and a data dir
// that was open before is closed at start.
import { chmodSync, lstatSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { freePort, type Instance, startInstance, tempDataDir } from '../support/instance.ts';

let instance: Instance;
let dataDir: string;

/** Every path under dir (dir included) whose mode lets group or others in, with that mode. */
function openToOthers(dir: string): string[] {
  const found: string[] = [];
  const visit = (path: string) => {
    const stat = lstatSync(path);
    if (!stat.isSymbolicLink() && (stat.mode & 0o077) !== 0) found.push(`${path.slice(dataDir.length) || '/'} ${(stat.mode & 0o777).toString(8)}`);
    if (stat.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
  };
  visit(dir);
  return found;
}

beforeAll(async () => {
  dataDir = tempDataDir('plumb-perms-');
  chmodSync(dataDir, 0o755);
  // The child inherits the umask it is spawned with: the common default, which opens files to all.
  const umask = process.umask(0o022);
  try {
    instance = await startInstance({
      dataDir,
      // A closed local port: the favicon proxy stores a placeholder without leaving the machine.
      env: { PLUMB_FAVICON_UPSTREAM: `http://127.0.0.1:${await freePort()}/`, PLUMB_FAVICON_ALLOW_PRIVATE_UPSTREAM: 'true' },
    });
  } finally {
    process.umask(umask);
  }
}, 90_000);

afterAll(async () => {
  await instance?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('the data dir of plumb serve', () => {
  it('holds nothing readable by group or others while the node runs', async () => {
    // A named source's icon: the favicon cache gets a directory and a file.
    expect((await fetch(`${instance.url}/api/favicon/source/Google`)).status).toBe(200);
    const names = readdirSync(dataDir).sort();
    expect(names).toEqual(expect.arrayContaining(['analytics', 'favicons', 'jwt-secret', 'meta', 'plumb.lock']));
    expect(openToOthers(dataDir)).toEqual([]);
  });

  it('holds nothing readable by group or others after it stopped', async () => {
    expect((await instance.stop()).code).toBe(0);
    expect(openToOthers(dataDir)).toEqual([]);
  });
});
