// GET /metrics on a real node: who may read it (a bearer token on the HTTP port, anyone on the
// separate listener, nobody when neither is set), and that its figures move with what the node
// does: ingest accepted and refused, requests by route pattern, store calls, a failed webhook
// delivery, and leadership lost to another node.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { as, type Person, person } from '../support/accounts.ts';
import { freePort, startInstance, waitFor } from '../support/instance.ts';
import { exposedSamples } from '../support/metrics.ts';
import { startTestNode, type TestNode } from '../support/node.ts';
import { type Receiver, startReceiver } from '../support/webhook-receiver.ts';

const TOKEN = 'metrics-token-for-tests';
const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';
const NAMESPACE = `plumb-metrics-${process.pid}`;

let t: TestNode;
let owner: Person;
let receiver: Receiver;
let metricsAddress: string;
let redis: Redis;

beforeAll(async () => {
  receiver = await startReceiver();
  metricsAddress = `127.0.0.1:${await freePort()}`;
  t = await startTestNode({
    PLUMB_METRICS_TOKEN: TOKEN,
    PLUMB_METRICS_ADDRESS: metricsAddress,
    PLUMB_API_RATE_PER_SECOND: '100000',
    PLUMB_API_BURST: '100000',
    PLUMB_WEBHOOK_ALLOW_DEVELOPMENT_TARGETS: 'true',
    PLUMB_WEBHOOK_RETRY_BASE_SECONDS: '60',
    PLUMB_REDIS_URL: 'redis://127.0.0.1:6379',
    PLUMB_NAMESPACE: NAMESPACE,
    PLUMB_LEADER_LEASE_MS: '1500',
  });
  owner = await person(t, 'owner');
  redis = new Redis('redis://127.0.0.1:6379', { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  await waitFor(async () => t.node.runtime.elector.isLeader(), 10_000, () => 'the node never led');
}, 60_000);

afterAll(async () => {
  await t?.stop();
  await receiver?.close();
  await redis?.del(`${NAMESPACE}:leader`);
  redis?.disconnect();
});

const scrape = async (headers: Record<string, string> = { Authorization: `Bearer ${TOKEN}` }) => fetch(`${t.url}/metrics`, { headers });

/** The scraped samples, by series (`name{label="…",…}` as written). */
async function samples(): Promise<Map<string, number>> {
  const res = await scrape();
  expect(res.status).toBe(200);
  return exposedSamples(await res.text());
}

const sampleOf = (all: Map<string, number>, series: string) => all.get(series) ?? 0;

function postJson(path: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${t.url}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: JSON.stringify(body) });
}

describe('GET /metrics on the HTTP port', () => {
  it('refuses a request without the token, or with another, naming the scheme', async () => {
    for (const headers of [{}, { Authorization: 'Bearer not-the-token' }, { Authorization: TOKEN }] as Record<string, string>[]) {
      const res = await scrape(headers);
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
      expect(await res.json()).toEqual({ code: 'unauthorized', message: expect.stringContaining('Bearer') });
    }
  });

  it('answers the Prometheus text format with the process figures: RSS, heap and event-loop delay', async () => {
    const res = await scrape();
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    for (const name of ['process_resident_memory_bytes', 'nodejs_heap_size_used_bytes', 'nodejs_eventloop_lag_p99_seconds', 'plumb_ingest_journal_pending', 'plumb_ingest_writer_lag_seconds']) {
      expect(text).toMatch(new RegExp(`^${name} \\d`, 'm'));
    }
  });
});

describe('what the figures count', () => {
  it('counts accepted pageviews, and refused ones by reason (a bot, a missing Origin)', async () => {
    const token = await t.token(['ingest:write']);
    const before = await samples();
    const pageview = { url: 'https://example.com/metrics-page', timestamp: new Date().toISOString(), visitor_ip: '193.0.6.139', user_agent: FIREFOX };
    expect((await postJson('/api/ingest/server/pageview', pageview, { Authorization: `Bearer ${token}` })).status).toBe(202);
    expect((await postJson('/ingest', { url: 'https://example.com/bot', referrer: '' }, { Origin: 'https://example.com', 'User-Agent': 'curl/8.5.0' })).status).toBe(202);
    expect((await postJson('/ingest', { url: 'https://example.com/no-origin' }, { 'User-Agent': FIREFOX })).status).toBe(403);
    const after = await samples();
    const delta = (series: string) => sampleOf(after, series) - sampleOf(before, series);
    expect(delta('plumb_ingest_items_total{outcome="accepted",reason=""}')).toBe(1);
    expect(delta('plumb_ingest_items_total{outcome="refused",reason="bot"}')).toBe(1);
    expect(delta('plumb_ingest_items_total{outcome="refused",reason="forbidden"}')).toBe(1);
  });

  it("times the ingest journal's fsyncs: an accepted pageview waited for one", async () => {
    const before = await samples();
    const res = await postJson('/ingest', { url: 'https://example.com/fsync-timed' }, { Origin: 'https://example.com', 'User-Agent': FIREFOX });
    expect(res.status).toBe(202);
    const after = await samples();
    const name = 'plumb_ingest_journal_fsync_duration_seconds';
    const delta = (series: string) => sampleOf(after, series) - sampleOf(before, series);
    expect(delta(`${name}_count`)).toBeGreaterThanOrEqual(1);
    expect(delta(`${name}_sum`)).toBeGreaterThan(0);
    // Cumulative buckets: the last holds every fsync, and none holds more than a later one.
    expect(sampleOf(after, `${name}_bucket{le="+Inf"}`)).toBe(sampleOf(after, `${name}_count`));
    expect(sampleOf(after, `${name}_bucket{le="0.0001"}`)).toBeLessThanOrEqual(sampleOf(after, `${name}_bucket{le="2.5"}`));
  });

  it('labels requests by their route pattern and status, never by the ids in the URL', async () => {
    const before = await samples();
    const path = `/api/sites/${t.site.id}/stats/kpis`;
    expect((await as(t, owner, 'GET', path)).status).toBe(200);
    expect((await as(t, owner, 'GET', `/api/sites/${crypto.randomUUID()}/stats/kpis`)).status).toBe(404);
    const after = await samples();
    const series = (status: number) => `plumb_http_request_duration_seconds_count{method="GET",route="/api/sites/:id/stats/kpis",status="${status}"}`;
    expect(sampleOf(after, series(200)) - sampleOf(before, series(200))).toBe(1);
    expect(sampleOf(after, series(404)) - sampleOf(before, series(404))).toBe(1);
    expect([...after.keys()].some((key) => key.includes(t.site.id))).toBe(false);
    // Reading the stats queried the analytics store, and the session lookups the metadata store.
    expect(sampleOf(after, 'plumb_store_query_duration_seconds_count{store="analytics",operation="query"}')).toBeGreaterThan(sampleOf(before, 'plumb_store_query_duration_seconds_count{store="analytics",operation="query"}'));
    expect(sampleOf(after, 'plumb_store_query_duration_seconds_count{store="metadata",operation="query"}')).toBeGreaterThan(0);
  });

  it('counts a failed webhook delivery by its failure, and shows it waiting to be retried', async () => {
    receiver.respond('/failing', 500);
    const created = await as(t, owner, 'POST', `/api/sites/${t.site.id}/webhooks`, { name: 'failing', url: `${receiver.url}/failing`, events: ['goal.created'] });
    expect(created.status).toBe(201);
    const before = await samples();
    expect((await as(t, owner, 'POST', `/api/sites/${t.site.id}/webhooks/${(created.body.webhook as { id: string }).id}/test`)).status).toBe(202);
    await receiver.waitFor('/failing', 1);
    let after = before;
    await waitFor(
      async () => {
        after = await samples();
        return sampleOf(after, 'plumb_webhook_deliveries{status="retrying"}') === 1;
      },
      10_000,
      () => 'the failed delivery was never shown as retrying',
    );
    expect(sampleOf(after, 'plumb_webhook_attempts_total{result="http_status"}') - sampleOf(before, 'plumb_webhook_attempts_total{result="http_status"}')).toBe(1);
  });

  it('shows the leadership and its epoch, and zero for both once another node takes the lease', async () => {
    const leading = await samples();
    expect(sampleOf(leading, 'plumb_leader')).toBe(1);
    expect(sampleOf(leading, 'plumb_leader_epoch')).toBeGreaterThan(0);
    await redis.set(`${NAMESPACE}:leader`, 'intruder|999999', 'PX', 60_000);
    let following = leading;
    await waitFor(
      async () => {
        following = await samples();
        return sampleOf(following, 'plumb_leader') === 0;
      },
      10_000,
      () => 'the node never stepped down',
    );
    expect(sampleOf(following, 'plumb_leader_epoch')).toBe(0);
  });
});

describe('GET /metrics on -metrics-address', () => {
  it('answers without a token, and nothing but /metrics', async () => {
    const res = await fetch(`http://${metricsAddress}/metrics`);
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/^plumb_leader \d/m);
    const other = await fetch(`http://${metricsAddress}/api/status`);
    expect(other.status).toBe(404);
    expect(await other.json()).toMatchObject({ code: 'not_found' });
  });
});

describe('a node with neither setting', () => {
  it('serves no metrics: GET /metrics is a JSON 404 saying how to turn them on', async () => {
    const plain = await startInstance();
    try {
      const res = await fetch(`${plain.url}/metrics`);
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ code: 'not_found', message: expect.stringContaining('-metrics-token') });
    } finally {
      await plain.destroy();
    }
  }, 60_000);
});
