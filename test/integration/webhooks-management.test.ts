// Webhook management through a real node without the development flag: create (secret shown once,
// stored sealed), read, list, replace, delete, rotate, test, history and the event catalog, for
// instance and site webhooks; who may do it; validation answers; every blocked address class
// refused when a webhook is configured (names resolved by a test resolver, and IP literals).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createApiClient } from '../../lib/auth/api-clients.ts';
import { createDeliveryQueue } from '../../lib/webhooks/queue.ts';
import { gatewayOf } from '../../services/api.service.ts';
import createWebhooksService from '../../services/webhooks.service.ts';
import { as, type Person, person, withToken } from '../support/accounts.ts';
import { waitFor } from '../support/instance.ts';
import { startTestNode, type TestNode } from '../support/node.ts';

let t: TestNode;
let owner: Person;
let admin: Person;
let siteAdmin: Person;
let editor: Person;
let plainUser: Person;
let ownerToken: string;

/** What the test resolver answers per host name; changed by tests as they go. */
const dns: Record<string, string[]> = { 'hooks.public.test': ['93.184.215.14'] };
const resolver = async (host: string) => {
  const answer = dns[host];
  if (!answer) throw new Error(`ENOTFOUND ${host}`);
  return answer;
};

const ISO = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
const UUID = expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
const db = () => t.node.runtime.metadata();
const siteHooks = () => `/api/sites/${t.site.id}/webhooks`;
const INSTANCE = '/api/admin/webhooks';
const valid = { name: 'Goal feed', url: 'https://hooks.public.test/plumb', events: ['goal.created', 'goal.converted'] };

beforeAll(async () => {
  t = await startTestNode({ PLUMB_API_RATE_PER_SECOND: '100000', PLUMB_API_BURST: '100000' });
  const broker = t.node.broker;
  await broker.destroyService(broker.getLocalService('webhooks')!);
  broker.createService(createWebhooksService(t.node.runtime, { resolver }));
  await broker.waitForServices('webhooks');
  gatewayOf(broker).refreshRoutes();
  [owner, admin, siteAdmin, editor, plainUser] = await Promise.all([person(t, 'owner'), person(t, 'admin'), person(t), person(t), person(t)]);
  await db().query("INSERT INTO site_members (site_id, user_id, role) VALUES ($1, $2, 'admin'), ($1, $3, 'editor')", [t.site.id, siteAdmin.id, editor.id]);
  ownerToken = (await createApiClient(db(), { name: 'owner token', scopes: ['stats:read'], sites: [{ siteId: t.site.id, role: 'owner' }], ownerUserId: owner.id })).token;
}, 60_000);

afterAll(() => t.stop());

describe('creating and reading webhooks', () => {
  it('POST creates a site webhook: 201 with the webhook and a random secret of 32+ bytes, shown only here', async () => {
    const res = await as(t, siteAdmin, 'POST', siteHooks(), { ...valid, description: ' Conversions to the CRM ' });
    expect(res.status).toBe(201);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.body).toEqual({
      webhook: {
        id: UUID,
        scope: 'site',
        site_id: t.site.id,
        name: 'Goal feed',
        description: 'Conversions to the CRM',
        url: 'https://hooks.public.test/plumb',
        events: ['goal.created', 'goal.converted'],
        enabled: true,
        created_at: ISO,
        updated_at: ISO,
        secret_rotated_at: ISO,
      },
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{43}$/),
    });
    const secret = res.body.secret as string;
    const id = (res.body.webhook as { id: string }).id;
    expect(Buffer.from(secret.slice('whsec_'.length), 'base64url').length).toBe(32);

    // Stored sealed, never in clear; not in any later answer.
    const stored = await db().query<{ secret_sealed: string }>('SELECT secret_sealed FROM webhooks WHERE id = $1', [id]);
    expect(stored.rows[0].secret_sealed).toMatch(/^v1\./);
    expect(stored.rows[0].secret_sealed).not.toContain(secret.slice(6));
    const got = await as(t, siteAdmin, 'GET', `${siteHooks()}/${id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual({ webhook: res.body.webhook });
    const list = await as(t, siteAdmin, 'GET', siteHooks());
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ total: 1, limit: 25, offset: 0, has_more: false, items: [res.body.webhook] });
    expect(JSON.stringify([got.body, list.body])).not.toContain(secret);
  });

  it('writes a team audit entry for site webhooks and an instance audit entry for instance webhooks', async () => {
    const site = await as(t, owner, 'POST', siteHooks(), { ...valid, name: 'Audited' });
    const instance = await as(t, admin, 'POST', INSTANCE, { name: 'Ops feed', url: 'https://hooks.public.test/ops', events: ['team.created'] });
    expect(instance.status).toBe(201);
    const siteId = (site.body.webhook as { id: string }).id;
    const instanceId = (instance.body.webhook as { id: string }).id;
    const team = await db().query<{ action: string; details: string; site_id: string }>("SELECT action, details, site_id FROM audit_log WHERE action = 'site.webhook.created' AND subject_id = $1", [siteId]);
    expect(team.rows).toEqual([{ action: 'site.webhook.created', details: 'webhook "Audited" on example.com → hooks.public.test', site_id: t.site.id }]);
    const inst = await db().query<{ action: string; actor_email: string }>('SELECT action, actor_email FROM instance_audit_log WHERE details LIKE $1', [`%${instanceId}%`]);
    expect(inst.rows).toEqual([{ action: 'webhook.created', actor_email: admin.email }]);
  });

  it('keeps instance and site webhooks apart: an id of the other kind, or of another site, answers 404', async () => {
    const instance = await as(t, owner, 'POST', INSTANCE, { name: 'Instance only', url: 'https://hooks.public.test/i', events: ['site.created'] });
    const instanceId = (instance.body.webhook as { id: string }).id;
    expect((await as(t, owner, 'GET', `${siteHooks()}/${instanceId}`)).status).toBe(404);
    const site = await as(t, owner, 'POST', siteHooks(), valid);
    const siteId = (site.body.webhook as { id: string }).id;
    expect((await as(t, owner, 'GET', `${INSTANCE}/${siteId}`)).status).toBe(404);
    expect((await as(t, owner, 'GET', `/api/sites/${t.otherSite.id}/webhooks/${siteId}`)).status).toBe(404);
    expect((await as(t, owner, 'GET', INSTANCE)).body.items).toEqual(expect.arrayContaining([instance.body.webhook]));
  });

  it('GET …/webhooks/events lists the catalog of each scope with the data fields of each type', async () => {
    const site = await as(t, siteAdmin, 'GET', `${siteHooks()}/events`);
    expect(site.status).toBe(200);
    expect((site.body.events as { type: string }[]).map((e) => e.type)).toEqual([
      'site.updated',
      'site.deleted',
      'goal.created',
      'goal.updated',
      'goal.deleted',
      'goal.converted',
      'import.completed',
      'import.failed',
      'webhook.test',
    ]);
    expect((site.body.events as unknown[])[5]).toEqual({
      type: 'goal.converted',
      scope: 'site',
      description: 'a tracked pageview or custom event matches a goal',
      fields: ['site_id', 'goal_id', 'goal_name', 'goal_type', 'converted_at'],
    });
    const instance = await as(t, admin, 'GET', `${INSTANCE}/events`);
    expect((instance.body.events as { type: string }[]).map((e) => e.type)).toEqual([
      ...(site.body.events as { type: string }[]).map((e) => e.type),
      'site.created',
      'system.user.updated',
      'system.user.deleted',
      'team.created',
      'team.updated',
      'team.archived',
      'team.member.added',
      'team.member.removed',
    ]);
  });
});

describe('changing webhooks', () => {
  let id: string;
  let firstSecret: string;

  beforeAll(async () => {
    const res = await as(t, siteAdmin, 'POST', siteHooks(), { ...valid, name: 'To change' });
    id = (res.body.webhook as { id: string }).id;
    firstSecret = res.body.secret as string;
  });

  it('PUT replaces every field; an omitted description becomes empty and an omitted enabled true', async () => {
    const off = await as(t, siteAdmin, 'PUT', `${siteHooks()}/${id}`, { name: 'Renamed', url: 'https://hooks.public.test/v2', events: ['site.updated'], description: 'x', enabled: false });
    expect(off.status).toBe(200);
    expect(off.body.webhook).toMatchObject({ name: 'Renamed', url: 'https://hooks.public.test/v2', events: ['site.updated'], description: 'x', enabled: false });
    const on = await as(t, siteAdmin, 'PUT', `${siteHooks()}/${id}`, { name: 'Renamed', url: 'https://hooks.public.test/v2', events: ['site.updated', 'site.updated'] });
    expect(on.body.webhook).toMatchObject({ description: '', enabled: true, events: ['site.updated'] });
  });

  it('PUT wakes the dispatcher when the webhook is left enabled, so deliveries that waited while it was off go out at once', async () => {
    const wakes: string[] = [];
    const listener = t.node.broker.createService({ name: 'wake-listener', events: { 'webhooks.queued': () => void wakes.push('woken') } });
    try {
      const fields = { name: 'Renamed', url: 'https://hooks.public.test/v2', events: ['site.updated'] };
      expect((await as(t, siteAdmin, 'PUT', `${siteHooks()}/${id}`, { ...fields, enabled: false })).status).toBe(200);
      expect((await as(t, siteAdmin, 'PUT', `${siteHooks()}/${id}`, { ...fields, name: 'Refused', events: [] })).status).toBe(400);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(wakes).toEqual([]);
      expect((await as(t, siteAdmin, 'PUT', `${siteHooks()}/${id}`, { ...fields, enabled: true })).status).toBe(200);
      await waitFor(async () => wakes.length === 1, 5_000, () => `woken ${wakes.length} times`);
    } finally {
      await t.node.broker.destroyService(listener);
    }
  });

  it('rotate answers a new secret once and replaces the sealed one', async () => {
    const before = await db().query<{ secret_sealed: string }>('SELECT secret_sealed FROM webhooks WHERE id = $1', [id]);
    const res = await as(t, siteAdmin, 'POST', `${siteHooks()}/${id}/rotate`);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.body.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(res.body.secret).not.toBe(firstSecret);
    expect(res.body.webhook).toMatchObject({ id, secret_rotated_at: ISO });
    const after = await db().query<{ secret_sealed: string }>('SELECT secret_sealed FROM webhooks WHERE id = $1', [id]);
    expect(after.rows[0].secret_sealed).not.toBe(before.rows[0].secret_sealed);
  });

  it('test queues one webhook.test delivery (202) and the history lists it without body or secret; a disabled webhook answers 409', async () => {
    const created = await as(t, siteAdmin, 'POST', siteHooks(), { ...valid, name: 'Tested', events: ['import.failed'] });
    const hookId = (created.body.webhook as { id: string }).id;
    const secret = created.body.secret as string;
    // The name now points at loopback: the attempt is refused before any connection (no traffic leaves).
    dns['hooks.public.test'] = ['127.0.0.1'];
    try {
      const res = await as(t, siteAdmin, 'POST', `${siteHooks()}/${hookId}/test`);
      expect(res.status).toBe(202);
      expect(res.body).toEqual({ event_id: UUID, delivery_ids: [UUID] });
      let history = await as(t, siteAdmin, 'GET', `${siteHooks()}/${hookId}/deliveries`);
      await waitFor(
        async () => {
          history = await as(t, siteAdmin, 'GET', `${siteHooks()}/${hookId}/deliveries`);
          return (history.body.items as { attempts: number }[])[0]?.attempts >= 1;
        },
        10_000,
        () => `no attempt recorded: ${JSON.stringify(history.body)}`,
      );
      expect(history.status).toBe(200);
      expect(history.body).toMatchObject({ total: 1, limit: 25, offset: 0, has_more: false });
      const [item] = history.body.items as Record<string, unknown>[];
      expect(Object.keys(item).sort()).toEqual(['attempt_log', 'attempts', 'completed_at', 'created_at', 'error', 'event_id', 'event_type', 'id', 'next_attempt_at', 'response_status', 'status']);
      expect(item).toMatchObject({ id: (res.body.delivery_ids as string[])[0], event_id: res.body.event_id, event_type: 'webhook.test', status: 'retrying', attempts: 1, response_status: null, error: 'blocked_address' });
      expect(item.attempt_log).toEqual([{ attempt: 1, started_at: ISO, duration_ms: expect.any(Number), response_status: null, error: 'blocked_address' }]);
      const text = JSON.stringify(history.body);
      expect(text).not.toContain(secret);
      expect(text).not.toContain('api_version');
      expect(text).not.toContain('Test delivery queued');
    } finally {
      dns['hooks.public.test'] = ['93.184.215.14'];
    }
    await as(t, siteAdmin, 'PUT', `${siteHooks()}/${hookId}`, { ...valid, enabled: false });
    const disabled = await as(t, siteAdmin, 'POST', `${siteHooks()}/${hookId}/test`);
    expect(disabled.status).toBe(409);
    expect(disabled.body).toEqual({ code: 'conflict', message: 'The webhook is disabled; enable it to send a test delivery' });
  });

  it('DELETE answers 204; the webhook and its history then answer 404', async () => {
    const res = await as(t, siteAdmin, 'DELETE', `${siteHooks()}/${id}`);
    expect(res.status).toBe(204);
    expect((await as(t, siteAdmin, 'GET', `${siteHooks()}/${id}`)).status).toBe(404);
    expect((await as(t, siteAdmin, 'GET', `${siteHooks()}/${id}/deliveries`)).status).toBe(404);
    expect((await as(t, siteAdmin, 'DELETE', `${siteHooks()}/${id}`)).status).toBe(404);
  });
});

describe('who may manage webhooks', () => {
  it('people only: an API client is refused with 403 even with the owner role on the site', async () => {
    for (const [method, path] of [
      ['POST', siteHooks()],
      ['GET', siteHooks()],
      ['POST', INSTANCE],
    ] as const) {
      const res = await withToken(t, ownerToken, method, path, method === 'POST' ? valid : undefined);
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ code: 'forbidden', message: 'This action needs a signed-in user; API tokens cannot perform it' });
    }
  });

  it('site webhooks: site owners/admins and instance owners/admins; editors 403; people without the site 404', async () => {
    expect((await as(t, editor, 'GET', siteHooks())).status).toBe(403);
    expect((await as(t, plainUser, 'GET', siteHooks())).status).toBe(404);
    expect((await as(t, admin, 'GET', siteHooks())).status).toBe(200);
    expect((await as(t, undefined, 'GET', siteHooks())).status).toBe(401);
  });

  it('instance webhooks: instance owners and admins only', async () => {
    expect((await as(t, siteAdmin, 'GET', INSTANCE)).status).toBe(403);
    expect((await as(t, plainUser, 'POST', INSTANCE, valid)).status).toBe(403);
    expect((await as(t, owner, 'GET', INSTANCE)).status).toBe(200);
  });
});

describe('validation', () => {
  const refused = async (path: string, body: unknown) => {
    const res = await as(t, owner, 'POST', path, body);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_failed');
    return res.body as { message: string; fields: { field: string; message: string }[] };
  };

  it.each([
    ['an http URL', { ...valid, url: 'http://hooks.public.test/x' }, 'url', 'url must be an https:// URL'],
    ['credentials in the URL', { ...valid, url: 'https://user:pw@hooks.public.test/x' }, 'url', 'url must not contain credentials (user:password@); authenticate with the signature instead'],
    ['a fragment', { ...valid, url: 'https://hooks.public.test/x#frag' }, 'url', 'url must not contain a fragment (#…)'],
    ['an empty fragment', { ...valid, url: 'https://hooks.public.test/x#' }, 'url', 'url must not contain a fragment (#…)'],
    ['not a URL', { ...valid, url: 'hooks.public.test/x' }, 'url', 'url must be an absolute https:// URL'],
    ['a name nobody resolves', { ...valid, url: 'https://nowhere.test/x' }, 'url', 'url must name a host that resolves (nowhere.test does not)'],
    ['an unknown event type', { ...valid, events: ['goal.exploded'] }, 'events', 'events: "goal.exploded" is not an event type (GET …/webhooks/events lists them)'],
    ['an instance event on a site webhook', { ...valid, events: ['team.created'] }, 'events', 'events: "team.created" is an instance event; only instance webhooks may subscribe to it'],
  ])('refuses %s', async (_what, body, field, message) => {
    const body400 = await refused(siteHooks(), body);
    expect(body400.fields).toEqual([{ field, message }]);
  });

  it.each([
    ['no events', { ...valid, events: [] }, 'events', 'events must hold at least 1 item'],
    ['no URL', { name: 'x', events: ['goal.created'] }, 'url', 'url is required'],
    ['a blank name', { ...valid, name: '   ' }, 'name', 'name must not be empty'],
    ['enabled that is not a boolean', { ...valid, enabled: 'yes' }, 'enabled', 'enabled must be true or false'],
  ])('refuses %s, naming the field', async (_what, body, field, message) => {
    const res = await refused(siteHooks(), body);
    expect(res.fields.map((f) => ({ field: f.field, message: f.message }))).toEqual([{ field, message }]);
    expect(res.message).toBe(message);
  });

  it('refuses unknown fields, naming each', async () => {
    const res = await refused(siteHooks(), { ...valid, secret: 'mine', retries: 3 });
    expect(res.fields).toEqual([
      { field: 'secret', message: 'secret is not an accepted field', type: 'objectStrict' },
      { field: 'retries', message: 'retries is not an accepted field', type: 'objectStrict' },
    ]);
  });

  it('names every problem at once', async () => {
    const res = await refused(INSTANCE, { name: 'x', url: 'http://user@hooks.public.test/', events: ['nope', 'team.created'] });
    expect(res.fields).toEqual([
      { field: 'events', message: 'events: "nope" is not an event type (GET …/webhooks/events lists them)' },
      { field: 'url', message: 'url must not contain credentials (user:password@); authenticate with the signature instead' },
    ]);
  });

  it('PUT validates the same way', async () => {
    const created = await as(t, owner, 'POST', siteHooks(), valid);
    const res = await as(t, owner, 'PUT', `${siteHooks()}/${(created.body.webhook as { id: string }).id}`, { ...valid, url: 'https://hooks.public.test/#x', extra: 1 });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_failed');
  });
});

describe('destinations refused at configuration', () => {
  const BLOCKED: [string, string][] = [
    ['loopback', '127.0.0.1'],
    ['loopback (IPv6)', '::1'],
    ['private 10/8', '10.1.2.3'],
    ['private 172.16/12', '172.16.5.4'],
    ['private 192.168/16', '192.168.1.20'],
    ['CGNAT 100.64/10', '100.64.0.9'],
    ['link-local', '169.254.169.254'],
    ['link-local (IPv6)', 'fe80::1'],
    ['multicast', '224.0.0.251'],
    ['multicast (IPv6)', 'ff02::1'],
    ['documentation 192.0.2/24', '192.0.2.10'],
    ['documentation 198.51.100/24', '198.51.100.7'],
    ['documentation 203.0.113/24', '203.0.113.9'],
    ['documentation 2001:db8::/32', '2001:db8::5'],
    ['unique-local', 'fd12:3456::1'],
    ['this network 0/8', '0.0.0.1'],
    ['unspecified', '0.0.0.0'],
    ['broadcast', '255.255.255.255'],
    ['IPv4-mapped loopback', '::ffff:127.0.0.1'],
    ['IPv4-mapped private', '::ffff:10.0.0.1'],
    ['6to4', '2002:c000:201::1'],
    ['Teredo', '2001:0:4136:e378::1'],
    ['NAT64', '64:ff9b::a00:1'],
    ['benchmarking', '198.18.0.1'],
    ['reserved 240/4', '240.0.0.1'],
  ];

  it.each(BLOCKED)('refuses a name resolving to %s (%s)', async (_what, address) => {
    const host = `blocked-${address.replace(/[^0-9a-f]/gi, '-')}.test`;
    dns[host] = [address];
    const res = await as(t, owner, 'POST', INSTANCE, { ...valid, url: `https://${host}/hook` });
    expect(res.status).toBe(400);
    expect(res.body.fields).toEqual([{ field: 'url', message: expect.stringMatching(new RegExp(`^url must not reach a reserved address: ${host.replace(/\./g, '\\.')} resolves to a \\w+ address, which outbound requests may not reach \\(loopback, private`)) }]);
  });

  it('refuses IP literals of blocked classes, and a name with one blocked address among public ones', async () => {
    for (const url of ['https://127.0.0.1/x', 'https://[::1]/x', 'https://10.0.0.1/x', 'https://[::ffff:7f00:1]/x', 'https://169.254.169.254/latest']) {
      const res = await as(t, owner, 'POST', INSTANCE, { ...valid, url });
      expect(res.status).toBe(400);
      expect((res.body.fields as { field: string }[])[0].field).toBe('url');
    }
    dns['mixed.test'] = ['93.184.215.14', '10.0.0.1'];
    expect((await as(t, owner, 'POST', INSTANCE, { ...valid, url: 'https://mixed.test/x' })).status).toBe(400);
  });

  it('accepts a public destination', async () => {
    expect((await as(t, owner, 'POST', INSTANCE, { ...valid, url: 'https://93.184.215.14:8443/hook?x=1' })).status).toBe(201);
  });
});

describe('retention', () => {
  it('purges deliveries, their attempts and events past the retention, and deleted webhooks left without history', async () => {
    const old = await as(t, owner, 'POST', siteHooks(), { ...valid, name: 'Old history', events: ['import.completed'], enabled: false });
    const recent = await as(t, owner, 'POST', siteHooks(), { ...valid, name: 'Recent history', events: ['import.completed'], enabled: false });
    const oldId = (old.body.webhook as { id: string }).id;
    const recentId = (recent.body.webhook as { id: string }).id;
    // Queued directly (both are disabled, so nothing is sent): one event each, then the old one aged.
    for (const [hookId, eventId] of [
      [oldId, '11111111-1111-4111-8111-111111111111'],
      [recentId, '22222222-2222-4222-8222-222222222222'],
    ]) {
      await db().query("INSERT INTO webhook_events (id, type, site_id, data) VALUES ($1, 'import.completed', $2, '{}')", [eventId, t.site.id]);
      await db().query("INSERT INTO webhook_deliveries (id, event_id, webhook_id, status, body) VALUES (gen_random_uuid(), $1, $2, 'failed', '{}')", [eventId, hookId]);
    }
    await db().query(
      `INSERT INTO webhook_delivery_attempts (delivery_id, attempt, started_at, duration_ms, response_status, error)
       SELECT id, 1, now(), 5, 500, 'http_status' FROM webhook_deliveries WHERE webhook_id = $1`,
      [oldId],
    );
    await as(t, owner, 'DELETE', `${siteHooks()}/${oldId}`);
    await db().query("UPDATE webhook_deliveries SET created_at = now() - interval '31 days' WHERE webhook_id = $1", [oldId]);
    await db().query("UPDATE webhook_events SET created_at = now() - interval '31 days' WHERE id = '11111111-1111-4111-8111-111111111111'");
    await db().query("UPDATE webhooks SET deleted_at = now() - interval '31 days' WHERE id = $1", [oldId]);

    const oldDeliveries = (await db().query<{ id: string }>('SELECT id FROM webhook_deliveries WHERE webhook_id = $1', [oldId])).rows.map((r) => r.id);
    expect((await db().query('SELECT 1 FROM webhook_delivery_attempts WHERE delivery_id = ANY ($1::uuid[])', [oldDeliveries])).rowCount).toBe(1);

    await createDeliveryQueue(db).purge(30);

    const left = async (sql: string, id: string) => (await db().query(sql, [id])).rowCount;
    expect(await left('SELECT 1 FROM webhook_deliveries WHERE webhook_id = $1', oldId)).toBe(0);
    expect((await db().query('SELECT 1 FROM webhook_delivery_attempts WHERE delivery_id = ANY ($1::uuid[])', [oldDeliveries])).rowCount).toBe(0);
    expect(await left('SELECT 1 FROM webhook_events WHERE id = $1', '11111111-1111-4111-8111-111111111111')).toBe(0);
    expect(await left('SELECT 1 FROM webhooks WHERE id = $1', oldId)).toBe(0);
    expect(await left('SELECT 1 FROM webhook_deliveries WHERE webhook_id = $1', recentId)).toBe(1);
    expect(await left('SELECT 1 FROM webhook_events WHERE id = $1', '22222222-2222-4222-8222-222222222222')).toBe(1);
    expect(await left('SELECT 1 FROM webhooks WHERE id = $1', recentId)).toBe(1);
  });
});
