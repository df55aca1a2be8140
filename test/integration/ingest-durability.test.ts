// Acknowledged means stored: a `plumb serve` under tracker load is killed with SIGKILL; after a
// restart, every pageview that got a 202 is in the analytics store exactly once, and the visits
// their states make up add up to exactly those pageviews (the restarted writer has to read the
// states it cancels back from the store). Both ways of acknowledging survive a killed process:
// after the journal's fsync, and (-ingest-sync write) once the write reached the kernel.
import { afterAll, describe, expect, it } from '@jest/globals';
import { rmSync } from 'node:fs';
import { createSite, createTeam } from '../../lib/sites/sites.ts';
import { silentLog } from '../../lib/log.ts';
import { openAnalyticsStore } from '../../lib/stores/analytics/index.ts';
import { openMetadataStore } from '../../lib/stores/metadata/index.ts';
import { startInstance, tempDataDirWithPglite } from '../support/instance.ts';

const dataDirs: string[] = [];

afterAll(() => {
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

async function seedSite(dataDir: string): Promise<string> {
  const metadata = await openMetadataStore({ dataDir, log: silentLog });
  const team = await createTeam(metadata, { name: 'Durable' });
  await createSite(metadata, { teamId: team.id, domain: 'durable.example' });
  await metadata.close();
  return team.id;
}

describe.each(['fsync', 'write'])('ingest durability with -ingest-sync %s', (mode) => {
  it('stores every acknowledged pageview exactly once across a SIGKILL', async () => {
    const dataDir = await tempDataDirWithPglite(`plumb-durability-${mode}-`);
    dataDirs.push(dataDir);
    const env = { PLUMB_INGEST_RATE_PER_SECOND: '100000', PLUMB_INGEST_BURST: '100000', PLUMB_INGEST_FLUSH_MS: '200', PLUMB_INGEST_SYNC: mode };
    const teamId = await seedSite(dataDir);
    const first = await startInstance({ dataDir, env });
    const acknowledged = new Set<number>();
    let next = 0;
    let killed = false;
    const sender = async () => {
      while (!killed) {
        const n = next++;
        try {
          const res = await fetch(`${first.url}/ingest`, {
            method: 'POST',
            headers: { 'Content-Type': 'text/plain', Origin: 'https://durable.example', 'User-Agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/133.0' },
            body: JSON.stringify({ url: `https://durable.example/p/${n}` }),
          });
          if (res.status === 202) acknowledged.add(n);
        } catch {
          // The connection died with the process: not acknowledged.
        }
      }
    };
    const senders = Array.from({ length: 16 }, sender);
    await new Promise((r) => setTimeout(r, 1500));
    await first.stop('SIGKILL');
    killed = true;
    await Promise.all(senders);
    expect(acknowledged.size).toBeGreaterThan(100);

    // The restarted node replays the journal; a graceful stop then drains it into the store.
    const second = await startInstance({ dataDir, env });
    expect((await second.stop('SIGTERM')).code).toBe(0);

    const analytics = await openAnalyticsStore({ dataDir, log: silentLog });
    try {
      const rows = await analytics.query<{ path: string; copies: string }>(
        'SELECT path, count() AS copies FROM {db:Identifier}.hits GROUP BY path',
        { db: analytics.tenantDatabase(teamId) },
      );
      const copies = new Map(rows.map((r) => [r.path, Number(r.copies)]));
      const missing = [...acknowledged].filter((n) => !copies.has(`/p/${n}`));
      const duplicated = rows.filter((r) => Number(r.copies) > 1).map((r) => r.path);
      expect({ missing, duplicated }).toEqual({ missing: [], duplicated: [] });
      // Unacknowledged requests may or may not have been stored, but never invented.
      for (const path of copies.keys()) expect(Number(path.split('/')[2])).toBeLessThan(next);
      // Every session is one visit (its states cancelled but the last) of as many pageviews as it has hits.
      const sessions = await analytics.query<{ session_id: string; hits: string; visits: string; pageviews: string }>(
        `SELECT h.session_id AS session_id, h.hits AS hits, v.visits AS visits, v.pageviews AS pageviews
           FROM (SELECT session_id, count() AS hits FROM {db:Identifier}.hits GROUP BY session_id) AS h
           LEFT JOIN (SELECT session_id, sum(sign) AS visits, sum(sign * visit_pageviews) AS pageviews FROM {db:Identifier}.visits GROUP BY session_id) AS v
             ON v.session_id = h.session_id`,
        { db: analytics.tenantDatabase(teamId) },
      );
      expect(sessions.length).toBeGreaterThan(0);
      for (const session of sessions) expect({ visits: Number(session.visits), pageviews: Number(session.pageviews) }).toEqual({ visits: 1, pageviews: Number(session.hits) });
    } finally {
      await analytics.close();
    }
  }, 90_000);
});
