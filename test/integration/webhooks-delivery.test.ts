// Webhook deliveries from a real node to real receivers on loopback (development flag on, retries
// in seconds): the envelope and signature checked against the documented rules written out here, who
// receives what, replayed conversions sent once, retries and their delays until failure, redirects
// not followed, the deadline, one delivery at a time per endpoint, rotation re-signing, deletion
// stopping deliveries, an HTTPS receiver with its own CA, and (flag off) every blocked address
// class refused at delivery time when a name is re-pointed after it was configured.
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ServerResponse } from 'node:http';
import { gatewayOf } from '../../services/api.service.ts';
import createWebhooksService, { type WebhooksNetwork } from '../../services/webhooks.service.ts';
import { as, joinTeam, type Person, person } from '../support/accounts.ts';
import { waitFor } from '../support/instance.ts';
import { startTestNode, type TestNode } from '../support/node.ts';
import { type Receiver, type Received, startReceiver, testCertificates, verifySignature } from '../support/webhook-receiver.ts';

let t: TestNode;
let owner: Person;
let http: Receiver;
let https: Receiver;
let ca: string;
const dns: Record<string, string[]> = { 'receiver.test': ['127.0.0.1'] };
const resolver = async (host: string) => {
  if (!dns[host]) throw new Error(`ENOTFOUND ${host}`);
  return dns[host];
};
const UUID = expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
const ISO = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
const db = () => t.node.runtime.metadata();
const siteHooks = () => `/api/sites/${t.site.id}/webhooks`;

/**
 * Swaps the node's webhooks service (and so its dispatcher) for one that reaches the test's
 * receivers, with the development-targets setting given (the node's own when omitted).
 */
async function useWebhooksService(network: WebhooksNetwork, allowDevelopmentTargets?: boolean) {
  const broker = t.node.broker;
  const { runtime } = t.node;
  const config = { ...runtime.config, webhookAllowDevelopmentTargets: allowDevelopmentTargets ?? runtime.config.webhookAllowDevelopmentTargets };
  await broker.destroyService(broker.getLocalService('webhooks')!);
  broker.createService(createWebhooksService({ ...runtime, config }, network));
  await broker.waitForServices('webhooks');
  gatewayOf(broker).refreshRoutes();
}

interface Hook {
  id: string;
  secret: string;
  path: string;
}

async function createHook(url: string, events: string[], base = siteHooks()): Promise<Hook> {
  const res = await as(t, owner, 'POST', base, { name: `hook ${url}`, url, events });
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { id: (res.body.webhook as { id: string }).id, secret: res.body.secret as string, path: new URL(url).pathname };
}

const sendTest = async (hook: Hook, base = siteHooks()) => {
  const res = await as(t, owner, 'POST', `${base}/${hook.id}/test`);
  expect(res.status).toBe(202);
  return res.body as { event_id: string; delivery_ids: string[] };
};

type Delivery = { id: string; status: string; attempts: number; response_status: number | null; error: string | null; attempt_log: { error: string | null; duration_ms: number | null }[] };
const deliveriesOf = async (hook: Hook, base = siteHooks()) => (await as(t, owner, 'GET', `${base}/${hook.id}/deliveries?limit=200`)).body.items as Delivery[];
async function deliveryWhen(hook: Hook, deliveryId: string, done: (d: Delivery) => boolean, timeoutMs = 15_000, base = siteHooks()): Promise<Delivery> {
  let found: Delivery | undefined;
  await waitFor(
    async () => {
      found = (await deliveriesOf(hook, base)).find((d) => d.id === deliveryId);
      return found !== undefined && done(found);
    },
    timeoutMs,
    () => `delivery ${deliveryId} never got there: ${JSON.stringify(found)}`,
  );
  return found!;
}
const json = (r: Received) => JSON.parse(r.raw.toString('utf8')) as Record<string, unknown>;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Most requests to one path that were being answered at the same moment. */
const overlap = (requests: Received[]) => Math.max(0, ...requests.map((r) => requests.filter((o) => o.at <= r.at && (o.answeredAt ?? Number.POSITIVE_INFINITY) > r.at).length));

beforeAll(async () => {
  const certs = testCertificates(['receiver.test', 'rebind.test']);
  ca = certs.ca;
  [http, https] = await Promise.all([startReceiver(), startReceiver({ tls: { key: certs.key, cert: certs.cert } })]);
  t = await startTestNode({
    PLUMB_API_RATE_PER_SECOND: '100000',
    PLUMB_API_BURST: '100000',
    PLUMB_WEBHOOK_ALLOW_DEVELOPMENT_TARGETS: 'true',
    PLUMB_WEBHOOK_RETRY_BASE_SECONDS: '1',
    PLUMB_WEBHOOK_RETRY_MAX_SECONDS: '4',
    PLUMB_WEBHOOK_MAX_ATTEMPTS: '4',
    PLUMB_WEBHOOK_DELIVERY_TIMEOUT: '1',
    PLUMB_WEBHOOK_SWEEP_SECONDS: '1',
  });
  await useWebhooksService({ resolver, ca });
  owner = await person(t, 'owner');
}, 60_000);

afterAll(async () => {
  await t.stop();
  await Promise.all([http.close(), https.close()]);
});

describe('what a delivery looks like', () => {
  it('POSTs the envelope with the documented headers, signed v1=HMAC-SHA256(secret, timestamp + "." + body)', async () => {
    const siteHook = await createHook(`${http.url}/signed/site`, ['goal.created']);
    const instanceHook = await createHook(`${http.url}/signed/instance`, ['goal.created', 'site.created'], '/api/admin/webhooks');
    const goal = await as(t, owner, 'POST', `/api/sites/${t.site.id}/goals`, { name: 'Signup goal', type: 'event', event_name: 'Signup' });
    expect(goal.status).toBe(201);
    const goalId = (goal.body.goal as { id: string }).id;
    const [atSite] = await http.waitFor('/signed/site', 1);
    const [atInstance] = await http.waitFor('/signed/instance', 1);

    for (const [received, hook] of [
      [atSite, siteHook],
      [atInstance, instanceHook],
    ] as const) {
      expect(received.method).toBe('POST');
      expect(received.headers['content-type']).toBe('application/json');
      expect(received.headers['user-agent']).toBe('Plumb-Webhook/2.11');
      const timestamp = Number(received.headers['x-plumb-timestamp']);
      expect(Math.abs(timestamp - Date.now() / 1000)).toBeLessThan(30);
      // The signature, computed here from the documented rules over the bytes as they arrived.
      const expected = `v1=${createHmac('sha256', hook.secret).update(`${timestamp}.${received.raw.toString('utf8')}`).digest('hex')}`;
      expect(received.headers['x-plumb-signature']).toBe(expected);
      expect(verifySignature(hook.secret, received)).toBe(true);
      expect(verifySignature(hook.secret === siteHook.secret ? instanceHook.secret : siteHook.secret, received)).toBe(false);
      const body = json(received);
      expect(Object.keys(body)).toEqual(['api_version', 'id', 'delivery_id', 'type', 'created_at', 'data']);
      expect(body).toEqual({
        api_version: '2.11',
        id: UUID,
        delivery_id: UUID,
        type: 'goal.created',
        created_at: ISO,
        data: { site_id: t.site.id, goal_id: goalId, goal_name: 'Signup goal', goal_type: 'event' },
      });
      expect(received.headers['x-plumb-event-id']).toBe(body.id);
      expect(received.headers['x-plumb-delivery-id']).toBe(body.delivery_id);
    }
    // One event, one delivery per webhook.
    expect(json(atSite).id).toBe(json(atInstance).id);
    expect(json(atSite).delivery_id).not.toBe(json(atInstance).delivery_id);

    // An instance event reaches instance webhooks only.
    const site = await as(t, owner, 'POST', '/api/sites', { domain: 'webhook-new-site.example', team_id: t.team.id });
    expect(site.status).toBe(201);
    const siteId = (site.body.site as { id: string }).id;
    const [created] = (await http.waitFor('/signed/instance', 2)).slice(1);
    expect(json(created)).toMatchObject({ type: 'site.created', data: { site_id: siteId, domain: 'webhook-new-site.example', team_id: t.team.id } });
    expect(verifySignature(instanceHook.secret, created)).toBe(true);
    expect(http.at('/signed/site')).toHaveLength(1);
    await as(t, owner, 'DELETE', `${siteHooks()}/${siteHook.id}`);
    await as(t, owner, 'DELETE', `/api/admin/webhooks/${instanceHook.id}`);
  });

  it('turns team and user changes made through the API into instance events', async () => {
    const hook = await createHook(`${http.url}/admin-events`, ['team.created', 'team.member.added', 'system.user.updated'], '/api/admin/webhooks');
    const member = await person(t);
    const team = await as(t, owner, 'POST', '/api/user/teams', { name: 'Webhook team' });
    expect(team.status).toBe(201);
    const teamId = team.body.id as string;
    expect((await joinTeam(t, owner, teamId, member, 'member')).status).toBe(200);
    expect((await as(t, owner, 'PATCH', `/api/admin/users/${member.id}`, { role: 'admin' })).status).toBe(200);
    const received = await http.waitFor('/admin-events', 3);
    const byType = Object.fromEntries(received.map((r) => [json(r).type, json(r).data]));
    expect(byType).toEqual({
      'team.created': { team_id: teamId, name: 'Webhook team', owner_user_id: owner.id, owner_email: owner.email },
      'team.member.added': { team_id: teamId, user_id: member.id, email: member.email, role: 'member' },
      'system.user.updated': { user_id: member.id, email: member.email, role: 'admin' },
    });
    for (const r of received) expect(verifySignature(hook.secret, r)).toBe(true);
    await as(t, owner, 'DELETE', `/api/admin/webhooks/${hook.id}`);
  });

  it('sends a stored conversion once, though its batch is announced again (a replay): the event id is derived from (row, goal)', async () => {
    const hook = await createHook(`${http.url}/converted`, ['goal.converted']);
    const goal = await as(t, owner, 'POST', `/api/sites/${t.site.id}/goals`, { name: 'Purchase', type: 'event', event_name: 'Purchase' });
    expect(goal.status).toBe(201);
    const goalId = (goal.body.goal as { id: string }).id;
    const purchase = (site: string, eventId: string) => ({
      table: 'events',
      team: t.team.id,
      row: { site_id: site, session_id: '42', event_id: eventId, name: 'Purchase', props: {}, ts: '2026-11-21T10:00:00.000Z' },
    });
    // What the ingest writer announces after storing a batch; the same batch written again after a
    // failure is announced again. Another site's conversion is not this site webhook's business.
    const batch = { records: [purchase(t.site.id, '0f5d3c2b-1a09-4876-9543-210fedcba987'), purchase(t.otherSite.id, '1e6c4d3a-2b10-4987-8654-321fedcba098')] };
    await t.node.broker.broadcastLocal('ingest.batch.stored', batch, { throwError: true });
    await t.node.broker.broadcastLocal('ingest.batch.stored', batch, { throwError: true });
    const [received] = await http.waitFor('/converted', 1);
    await sleep(1500);
    expect(http.at('/converted')).toHaveLength(1);
    expect(json(received)).toMatchObject({
      type: 'goal.converted',
      data: { site_id: t.site.id, goal_id: goalId, goal_name: 'Purchase', goal_type: 'event', converted_at: '2026-11-21T10:00:00.000Z' },
    });
    const rows = await db().query('SELECT id FROM webhook_deliveries WHERE webhook_id = $1', [hook.id]);
    expect(rows.rowCount).toBe(1);
    // The event was queued before the announcement returned: the writer acknowledges after that.
    const events = await db().query("SELECT id FROM webhook_events WHERE type = 'goal.converted' AND site_id = $1", [t.site.id]);
    expect(events.rows.map((r) => (r as { id: string }).id)).toEqual([json(received).id]);
    await as(t, owner, 'DELETE', `${siteHooks()}/${hook.id}`);
    await as(t, owner, 'DELETE', `/api/sites/${t.site.id}/goals/${goalId}`);
  });
});

describe('when the receiver does not take it', () => {
  it('retries after 1, 2 and 4 s (base doubling, capped, up to 20% jitter), the same bytes freshly signed, then fails', async () => {
    http.respond('/failing', 500);
    const hook = await createHook(`${http.url}/failing`, ['webhook.test']);
    const { delivery_ids: [deliveryId] } = await sendTest(hook);
    const attempts = await http.waitFor('/failing', 4, 20_000);
    const gaps = attempts.slice(1).map((r, i) => (r.at - attempts[i].at) / 1000);
    for (const [gap, delay] of gaps.map((g, i) => [g, [1, 2, 4][i]])) {
      expect(gap).toBeGreaterThanOrEqual(delay * 0.8 - 0.05);
      expect(gap).toBeLessThan(delay + 1.5);
    }
    for (const attempt of attempts) {
      expect(attempt.raw.equals(attempts[0].raw)).toBe(true);
      expect(attempt.headers['x-plumb-delivery-id']).toBe(deliveryId);
      expect(verifySignature(hook.secret, attempt)).toBe(true);
    }
    const failed = await deliveryWhen(hook, deliveryId, (d) => d.status === 'failed');
    expect(failed).toMatchObject({ status: 'failed', attempts: 4, response_status: 500, error: 'http_status' });
    expect(failed.attempt_log.map((a) => a.error)).toEqual(['http_status', 'http_status', 'http_status', 'http_status']);
    await sleep(1500);
    expect(http.at('/failing')).toHaveLength(4);
  }, 30_000);

  it('does not follow a redirect: a 3xx is a failed attempt', async () => {
    http.respond('/moved', (_req, res) => res.writeHead(302, { Location: `${http.url}/elsewhere` }).end());
    const hook = await createHook(`${http.url}/moved`, ['webhook.test']);
    const { delivery_ids: [deliveryId] } = await sendTest(hook);
    const delivery = await deliveryWhen(hook, deliveryId, (d) => d.attempts >= 1);
    expect(delivery).toMatchObject({ status: 'retrying', response_status: 302, error: 'redirect' });
    expect(http.at('/elsewhere')).toHaveLength(0);
    await as(t, owner, 'DELETE', `${siteHooks()}/${hook.id}`);
  });

  it('gives up on an attempt at the delivery timeout', async () => {
    const hanging: ServerResponse[] = [];
    http.respond('/silent', (_req, res) => hanging.push(res));
    const hook = await createHook(`${http.url}/silent`, ['webhook.test']);
    const { delivery_ids: [deliveryId] } = await sendTest(hook);
    const delivery = await deliveryWhen(hook, deliveryId, (d) => d.attempts >= 1);
    expect(delivery).toMatchObject({ status: 'retrying', response_status: null, error: 'timeout' });
    expect(delivery.attempt_log[0].duration_ms).toBeGreaterThanOrEqual(950);
    expect(delivery.attempt_log[0].duration_ms).toBeLessThan(2500);
    await as(t, owner, 'DELETE', `${siteHooks()}/${hook.id}`);
    for (const res of hanging) res.destroy();
  });
});

describe('ordering and concurrency', () => {
  it('sends one delivery at a time to an endpoint, while other endpoints proceed in parallel', async () => {
    const slow = (_req: unknown, res: ServerResponse) => setTimeout(() => res.writeHead(204).end(), 300);
    http.respond('/serial/a', slow);
    http.respond('/serial/b', slow);
    const a = await createHook(`${http.url}/serial/a`, ['webhook.test']);
    const b = await createHook(`${http.url}/serial/b`, ['webhook.test']);
    for (let i = 0; i < 4; i++) await Promise.all([sendTest(a), sendTest(b)]);
    const [atA, atB] = await Promise.all([http.waitFor('/serial/a', 4), http.waitFor('/serial/b', 4)]);
    await waitFor(async () => [...atA, ...atB].every((r) => r.answeredAt !== undefined), 5000, () => 'unanswered');
    expect(overlap(atA)).toBe(1);
    expect(overlap(atB)).toBe(1);
    expect(overlap([...atA, ...atB])).toBe(2);
    expect(new Set(atA.map((r) => r.headers['x-plumb-delivery-id'])).size).toBe(4);
  });
});

describe('rotation and deletion', () => {
  it('signs deliveries still waiting with the new secret after a rotation', async () => {
    let calls = 0;
    http.respond('/rotating', (_req, res) => res.writeHead(++calls === 1 ? 503 : 204).end());
    const hook = await createHook(`${http.url}/rotating`, ['webhook.test']);
    const { delivery_ids: [deliveryId] } = await sendTest(hook);
    const [first] = await http.waitFor('/rotating', 1);
    expect(verifySignature(hook.secret, first)).toBe(true);
    const rotated = await as(t, owner, 'POST', `${siteHooks()}/${hook.id}/rotate`);
    const newSecret = rotated.body.secret as string;
    const [, second] = await http.waitFor('/rotating', 2);
    expect(second.headers['x-plumb-delivery-id']).toBe(deliveryId);
    expect(verifySignature(newSecret, second)).toBe(true);
    expect(verifySignature(hook.secret, second)).toBe(false);
    expect(Number(second.headers['x-plumb-timestamp'])).toBeGreaterThanOrEqual(Number(first.headers['x-plumb-timestamp']));
    expect(await deliveryWhen(hook, deliveryId, (d) => d.status === 'succeeded')).toMatchObject({ attempts: 2, response_status: 204, error: null });
  });

  it('cancels what is waiting when the webhook is deleted, and queues nothing new for it', async () => {
    http.respond('/deleted', 500);
    const hook = await createHook(`${http.url}/deleted`, ['webhook.test', 'goal.created']);
    const { delivery_ids: [deliveryId] } = await sendTest(hook);
    await http.waitFor('/deleted', 1);
    await waitFor(async () => (await db().query("SELECT 1 FROM webhook_deliveries WHERE id = $1 AND status = 'retrying'", [deliveryId])).rowCount === 1, 5000, () => 'not retrying');
    expect((await as(t, owner, 'DELETE', `${siteHooks()}/${hook.id}`)).status).toBe(204);
    const row = await db().query<{ status: string }>('SELECT status FROM webhook_deliveries WHERE id = $1', [deliveryId]);
    expect(row.rows).toEqual([{ status: 'cancelled' }]);
    await as(t, owner, 'POST', `/api/sites/${t.site.id}/goals`, { name: 'After deletion', type: 'path', path_pattern: '/after' });
    await sleep(2500);
    expect(http.at('/deleted')).toHaveLength(1);
    expect((await db().query('SELECT 1 FROM webhook_deliveries WHERE webhook_id = $1', [hook.id])).rowCount).toBe(1);
  });
});

describe('disabled webhooks', () => {
  it('receive no new events; what was queued waits and goes out once the webhook is enabled again', async () => {
    const url = `${http.url}/paused`;
    const hook = await createHook(url, ['webhook.test', 'goal.created']);
    await as(t, owner, 'PUT', `${siteHooks()}/${hook.id}`, { name: 'paused', url, events: ['webhook.test', 'goal.created'], enabled: false });
    // A delivery queued just before the webhook was disabled.
    const eventId = '33333333-3333-4333-8333-333333333333';
    const deliveryId = '44444444-4444-4444-8444-444444444444';
    await db().query("INSERT INTO webhook_events (id, type, site_id, data) VALUES ($1, 'webhook.test', $2, '{}')", [eventId, t.site.id]);
    await db().query("INSERT INTO webhook_deliveries (id, event_id, webhook_id, status, body) VALUES ($1, $2, $3, 'pending', '{\"queued\":true}')", [deliveryId, eventId, hook.id]);
    await as(t, owner, 'POST', `/api/sites/${t.site.id}/goals`, { name: 'While disabled', type: 'path', path_pattern: '/disabled' });
    await sleep(2000);
    expect(http.at('/paused')).toHaveLength(0);
    expect((await db().query('SELECT 1 FROM webhook_deliveries WHERE webhook_id = $1', [hook.id])).rowCount).toBe(1);

    await as(t, owner, 'PUT', `${siteHooks()}/${hook.id}`, { name: 'paused', url, events: ['webhook.test', 'goal.created'], enabled: true });
    const [received] = await http.waitFor('/paused', 1);
    expect(received.headers['x-plumb-delivery-id']).toBe(deliveryId);
    expect(received.raw.toString()).toBe('{"queued":true}');
    expect(verifySignature(hook.secret, received)).toBe(true);
    await as(t, owner, 'DELETE', `${siteHooks()}/${hook.id}`);
  });
});

describe('HTTPS receivers', () => {
  it('delivers over TLS to a receiver whose certificate the configured CA signed', async () => {
    const hook = await createHook(`https://receiver.test:${https.port}/tls`, ['webhook.test']);
    const { delivery_ids: [deliveryId] } = await sendTest(hook);
    const [received] = await https.waitFor('/tls', 1);
    expect(received.headers.host).toBe(`receiver.test:${https.port}`);
    expect(verifySignature(hook.secret, received)).toBe(true);
    expect(await deliveryWhen(hook, deliveryId, (d) => d.status === 'succeeded')).toMatchObject({ attempts: 1, response_status: 204 });
  });
});

// Last: swaps in a service without the development flag.
describe('destinations refused at delivery (development flag off)', () => {
  const BLOCKED = [
    '127.0.0.1',
    '::1',
    '10.0.0.7',
    '172.16.0.1',
    '192.168.0.2',
    '100.64.1.1',
    '169.254.169.254',
    'fe80::1',
    '224.0.0.1',
    'ff02::1',
    '192.0.2.1',
    '198.51.100.2',
    '203.0.113.3',
    '2001:db8::1',
    'fd00::1',
    '0.0.0.1',
    '255.255.255.255',
    '::ffff:127.0.0.1',
    '2002:7f00:1::1',
    '2001:0:4136:e378::1',
  ];

  it('checks the name again before each attempt: re-pointed at any blocked class, nothing is sent', async () => {
    await useWebhooksService({ resolver, ca }, false);
    dns['rebind.test'] = ['93.184.215.14'];
    const hook = await createHook(`https://rebind.test:${https.port}/rebound`, ['webhook.test']);
    for (const address of BLOCKED) {
      dns['rebind.test'] = [address];
      const { delivery_ids: [deliveryId] } = await sendTest(hook);
      const delivery = await deliveryWhen(hook, deliveryId, (d) => d.attempts >= 1);
      expect({ address, error: delivery.error, status: delivery.response_status }).toEqual({ address, error: 'blocked_address', status: null });
    }
    expect(https.at('/rebound')).toHaveLength(0);
    // Control: pointed at the receiver with the guard lifted, the same webhook is reached.
    await useWebhooksService({ resolver, ca }, true);
    dns['rebind.test'] = ['127.0.0.1'];
    await sendTest(hook);
    await https.waitFor('/rebound', 1);
    await as(t, owner, 'DELETE', `${siteHooks()}/${hook.id}`);
  }, 60_000);
});
