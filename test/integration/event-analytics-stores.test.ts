// The visit-joined reads of event analytics and realtime give the same, right answers on embedded
// chDB and on a ClickHouse server over HTTP (the chDB-backed test server, in a child process: chDB
// binds one data directory per process): one SQL text, bound parameters of both transports, visits
// whose states are not merged yet, and session ids beyond 2^63.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { eventAudience } from '../../lib/analytics/events/audience.ts';
import { parseEventQuery } from '../../lib/analytics/events/filters.ts';
import { eventTimeseries } from '../../lib/analytics/events/timeseries.ts';
import { realtimeSnapshot } from '../../lib/analytics/realtime.ts';
import { silentLog } from '../../lib/log.ts';
import { type AnalyticsStore, openAnalyticsStore } from '../../lib/stores/analytics/index.ts';

const root = new URL('../../', import.meta.url).pathname;
const dirs = [mkdtempSync(join(tmpdir(), 'plumb-events-chdb-')), mkdtempSync(join(tmpdir(), 'plumb-events-http-'))];
const TEAM = 'c0ffee00-1234-4abc-8def-00000000e001';
const SITE = '11111111-2222-4333-8444-00000000e001';
const NOW = new Date('2026-05-04T12:00:00Z');
const ago = (minutes: number) => new Date(NOW.getTime() - minutes * 60_000);
const BIG = '18446744073709551000';

let server: ChildProcessWithoutNullStreams | undefined;
const stores: [string, AnalyticsStore][] = [];

async function startServer(dataDir: string): Promise<string> {
  const child = spawn(join(root, 'node_modules/.bin/node'), [join(root, 'test/support/clickhouse-test-server.ts'), '--port', '0', '--data-dir', dataDir], { stdio: ['pipe', 'pipe', 'pipe'] });
  server = child;
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`test server exited with ${code}: ${stderr}`)));
    setTimeout(() => reject(new Error(`test server printed no URL within 20s: ${stderr}`)), 20_000).unref();
  });
}

/**
 * Session BIG came from Google on a German desktop (three unmerged states of its visit) and signed
 * up twice on /pricing, whose referrer was the site itself, from an American phone; session 2 came
 * from Hacker News and signed up on /; session 3 sent a signup without any pageview, from Bing.
 */
async function seed(store: AnalyticsStore): Promise<void> {
  await store.ensureTenant(TEAM);
  const database = store.tenantDatabase(TEAM);
  const event = { site_id: SITE, name: 'signup', referrer: '', referrer_source: '', device: 'mobile', country: 'US' };
  await store.insert(
    'events',
    [
      { ...event, ts: ago(3), session_id: BIG, visitor_id: 1, path: '/pricing' },
      { ...event, ts: ago(2), session_id: BIG, visitor_id: 1, path: '/pricing' },
      { ...event, ts: ago(1), session_id: 2, visitor_id: 2, path: '/' },
      { ...event, ts: ago(1.5), session_id: 3, visitor_id: 3, path: '/', referrer: 'bing.com', referrer_source: 'Bing', device: 'tablet', country: 'FR' },
    ],
    { database },
  );
  await store.insert(
    'hits',
    [
      { ts: ago(4), site_id: SITE, session_id: BIG, visitor_id: 1, path: '/', referrer_source: 'Google' },
      { ts: ago(3), site_id: SITE, session_id: BIG, visitor_id: 1, path: '/pricing' },
      { ts: ago(2), site_id: SITE, session_id: 2, visitor_id: 2, path: '/', referrer_source: 'Hacker News' },
    ],
    { database },
  );
  const google = { site_id: SITE, session_id: BIG, visitor_id: 1, start: ago(4), first_ts: ago(4), last_ts: ago(3), referrer: 'google.com', referrer_source: 'Google', device: 'desktop', country: 'DE' };
  const hn = { site_id: SITE, session_id: 2, visitor_id: 2, start: ago(2), first_ts: ago(2), last_ts: ago(2), referrer: 'news.ycombinator.com', referrer_source: 'Hacker News', device: 'mobile', country: 'US' };
  await store.insert(
    'visits',
    [
      { ...google, sign: 1, version: 1 },
      { ...google, sign: -1, version: 1 },
      { ...google, sign: 1, version: 2 },
      { ...hn, sign: 1, version: 1 },
    ],
    { database },
  );
}

const query = (store: AnalyticsStore, extra: Record<string, string> = {}) =>
  parseEventQuery({ from: ago(60).toISOString(), to: NOW.toISOString(), event_name: 'signup', ...extra }, { id: SITE, tenant: store.tenantDatabase(TEAM), timezone: 'UTC' }, { needsEvent: true, now: NOW });

beforeAll(async () => {
  const url = await startServer(dirs[1]);
  stores.push(['chDB', await openAnalyticsStore({ dataDir: dirs[0], log: silentLog })]);
  stores.push(['ClickHouse over HTTP', await openAnalyticsStore({ dataDir: '/nonexistent', clickhouseUrl: url, log: silentLog })]);
  for (const [, store] of stores) await seed(store);
}, 60_000);

afterAll(async () => {
  for (const [, store] of stores) await store.close();
  if (server && server.exitCode === null) {
    const exited = once(server, 'exit');
    server.kill('SIGTERM');
    await exited;
  }
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
}, 30_000);

describe.each(['chDB', 'ClickHouse over HTTP'])('on %s', (name) => {
  const store = () => new Map(stores).get(name)!;

  it('audience: the visits’ sources, devices and countries, and the events’ own for a session without a visit', async () => {
    expect(await eventAudience(store(), query(store()))).toEqual({
        path: [
          { value: '/', unique_sessions: 2 },
          { value: '/pricing', unique_sessions: 1 },
        ],
        referrer: [
          { value: 'Bing', unique_sessions: 1 },
          { value: 'Google', unique_sessions: 1 },
          { value: 'Hacker News', unique_sessions: 1 },
        ],
        device: [
          { value: 'desktop', unique_sessions: 1 },
          { value: 'mobile', unique_sessions: 1 },
          { value: 'tablet', unique_sessions: 1 },
        ],
        country: [
          { value: 'DE', unique_sessions: 1 },
          { value: 'FR', unique_sessions: 1 },
          { value: 'US', unique_sessions: 1 },
        ],
    });
  });

  it('the referrer filter counts each event of the chosen sessions once, whatever the states of their visit', async () => {
    const total = async (extra: Record<string, string>) => (await eventTimeseries(store(), query(store(), extra))).rows.reduce((sum, row) => sum + row.events, 0);
    expect(await total({ dimension_key: 'referrer', dimension_value: 'Google' })).toBe(2);
    expect(await total({ dimension_key: 'referrer', dimension_value: 'Bing' })).toBe(1);
    expect(await total({ dimension_key: 'referrer', dimension_value: '' })).toBe(0);
    expect(await total({ dimension_key: 'country', dimension_value: 'US' })).toBe(1);
  });

  it('realtime: live visitors by their visit’s source, and each recent event’s', async () => {
    const snapshot = await realtimeSnapshot(store(), { id: SITE, tenant: store().tenantDatabase(TEAM) }, NOW);
    expect(snapshot.current_sources).toEqual([
      { source: 'Bing', visitors: 1 },
      { source: 'Google', visitors: 1 },
      { source: 'Hacker News', visitors: 1 },
    ]);
    expect(snapshot.recent_events.map((e) => [e.path, e.source])).toEqual([
      ['/', 'Hacker News'],
      ['/', 'Bing'],
      ['/pricing', 'Google'],
      ['/pricing', 'Google'],
    ]);
  });
});
