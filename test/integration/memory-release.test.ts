// `plumb serve` gives back the JavaScript heap it grew into while busy once it is quiet: the main
// thread after its start, and the visit states' worker after a burst of ingest. Each release is
// logged at debug level with the heap before and after it.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createSite, createTeam } from '../../lib/sites/sites.ts';
import { silentLog } from '../../lib/log.ts';
import { openMetadataStore } from '../../lib/stores/metadata/index.ts';
import { type Instance, startInstance, tempDataDirWithPglite, waitFor } from '../support/instance.ts';

const MAIN_RELEASE = 'released the JavaScript heap the node no longer used';
const WORKER_RELEASE = 'ingest writer: the visit states worker released the JavaScript heap it no longer used';

let instance: Instance;

const releases = (message: string) =>
  instance
    .output()
    .split('\n')
    .filter((line) => line.includes(`"msg":"${message}"`))
    .map((line) => JSON.parse(line) as { beforeMiB: number; afterMiB: number; ms: number });

beforeAll(async () => {
  const dataDir = await tempDataDirWithPglite('plumb-memory-release-');
  const metadata = await openMetadataStore({ dataDir, log: silentLog });
  const team = await createTeam(metadata, { name: 'Quiet' });
  await createSite(metadata, { teamId: team.id, domain: 'quiet.example' });
  await metadata.close();
  instance = await startInstance({ dataDir, env: { PLUMB_LOG_LEVEL: 'debug', PLUMB_INGEST_RATE_PER_SECOND: '100000', PLUMB_INGEST_BURST: '100000' } });
});

afterAll(() => instance.destroy());

describe('a quiet node', () => {
  it('gives back the heap its start grew, a few seconds after it is ready', async () => {
    await waitFor(async () => releases(MAIN_RELEASE).length > 0, 20_000, () => `no release of the main thread's heap in:\n${instance.output()}`);
    const [release] = releases(MAIN_RELEASE);
    expect(release.afterMiB).toBeLessThan(release.beforeMiB);
  });

  it("gives back the visit states worker's heap once a burst of ingest has ended", async () => {
    const pageview = (n: number) =>
      fetch(`${instance.url}/ingest`, {
        method: 'POST',
        headers: { 'Content-Type': 'text/plain', Origin: 'https://quiet.example', 'User-Agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/133.0' },
        body: JSON.stringify({ url: `https://quiet.example/p/${n % 500}`, referrer: 'https://news.ycombinator.com/' }),
      }).then((res) => expect(res.status).toBe(202));
    // Bursts of pageviews, each followed by a pause long enough to be quiet, until the worker has
    // grown enough to release (a few bursts at most).
    for (let burst = 0; burst < 10 && releases(WORKER_RELEASE).length === 0; burst++) {
      for (let sent = 0; sent < 3000; sent += 50) await Promise.all(Array.from({ length: 50 }, (_, i) => pageview(burst * 3000 + sent + i)));
      await waitFor(async () => releases(WORKER_RELEASE).length > 0, 4_000, () => '').catch(() => undefined);
    }
    const [release] = releases(WORKER_RELEASE);
    expect(release).toBeDefined();
    expect(release.afterMiB).toBeLessThan(release.beforeMiB);
  });
});
