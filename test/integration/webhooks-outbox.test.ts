// The webhook outbox: every change that has a webhook event queues it in the change's own
// transaction. With the webhooks service not running at all (no bus listener, no dispatcher), each
// API call's event and deliveries are in the metadata store when the answer arrives, exactly once;
// a change whose transaction fails leaves no event; and once the service is back the queued
// deliveries go out, each once, with no bus event to prompt them.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createGoal } from '../../lib/goals/goals.ts';
import type { MetadataQueryable, MetadataStore } from '../../lib/stores/metadata/index.ts';
import { removeMember } from '../../lib/teams/members.ts';
import createWebhooksService from '../../services/webhooks.service.ts';
import { as, joinTeam, type Person, person } from '../support/accounts.ts';
import { startTestNode, type TestNode } from '../support/node.ts';
import { type Receiver, startReceiver } from '../support/webhook-receiver.ts';

let t: TestNode;
let owner: Person;
let receiver: Receiver;
const db = () => t.node.runtime.metadata();

const INSTANCE_TYPES = [
  'site.created',
  'site.updated',
  'site.deleted',
  'goal.created',
  'goal.updated',
  'goal.deleted',
  'team.created',
  'team.updated',
  'team.archived',
  'team.member.added',
  'team.member.removed',
  'system.user.updated',
  'system.user.deleted',
];
const SITE_TYPES = ['goal.created', 'goal.updated', 'goal.deleted'];

interface EventRow {
  id: string;
  type: string;
  data: Record<string, unknown>;
  deliveries: number;
}

/** Every queued event of this type, with how many deliveries it has, oldest first. */
async function eventsOf(type: string): Promise<EventRow[]> {
  const { rows } = await db().query<EventRow>(
    `SELECT e.id, e.type, e.data, (SELECT count(*)::int FROM webhook_deliveries d WHERE d.event_id = e.id) AS deliveries
       FROM webhook_events e WHERE e.type = $1 ORDER BY e.created_at, e.id`,
    [type],
  );
  return rows;
}

/** Same fields and values (jsonb keeps its own key order). */
const equals = (a: Record<string, unknown>, b: Record<string, unknown>) =>
  Object.keys(a).length === Object.keys(b).length && Object.entries(b).every(([key, value]) => a[key] === value);

/** The one event of this type whose data is exactly `data`; fails when there is none or more than one. */
async function theEvent(type: string, data: Record<string, unknown>, deliveries = 1): Promise<EventRow> {
  const all = await eventsOf(type);
  const matching = all.filter((e) => equals(e.data, data));
  if (matching.length !== 1) throw new Error(`expected one ${type} event with ${JSON.stringify(data)}, found ${matching.length} among ${JSON.stringify(all)}`);
  expect(matching[0].deliveries).toBe(deliveries);
  return matching[0];
}

/** What the calls below read from an answer. */
type Answer = { [key: string]: unknown; id: string; site: { id: string }; goal: { id: string }; user: { id: string } };

async function call(method: string, path: string, body: unknown, status: number): Promise<Answer> {
  const res = await as(t, owner, method, path, body);
  if (res.status !== status) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as Answer;
}

beforeAll(async () => {
  receiver = await startReceiver();
  t = await startTestNode({
    PLUMB_API_RATE_PER_SECOND: '100000',
    PLUMB_API_BURST: '100000',
    PLUMB_WEBHOOK_ALLOW_DEVELOPMENT_TARGETS: 'true',
    PLUMB_WEBHOOK_SWEEP_SECONDS: '1',
  });
  owner = await person(t, 'owner');
  await call('POST', '/api/admin/webhooks', { name: 'instance', url: `${receiver.url}/instance`, events: INSTANCE_TYPES }, 201);
  await call('POST', `/api/sites/${t.site.id}/webhooks`, { name: 'site', url: `${receiver.url}/site`, events: SITE_TYPES }, 201);
  // Nothing of the webhooks service is left to hear of a change or to send anything.
  const broker = t.node.broker;
  await broker.destroyService(broker.getLocalService('webhooks')!);
}, 60_000);

afterAll(async () => {
  await t?.stop();
  await receiver?.close();
});

describe('with the webhooks service not running', () => {
  it('each committed change has its event and deliveries as soon as the API answers, once', async () => {
    const team = await call('POST', '/api/user/teams', { name: 'Outbox team' }, 201);
    await theEvent('team.created', { team_id: team.id, name: 'Outbox team', owner_user_id: owner.id, owner_email: owner.email });

    await call('PATCH', `/api/user/teams/${team.id}`, { name: 'Outbox team 2' }, 200);
    await theEvent('team.updated', { team_id: team.id, name: 'Outbox team 2' });
    // The same name again changes nothing, so it announces nothing either.
    await call('PATCH', `/api/user/teams/${team.id}`, { name: 'Outbox team 2' }, 200);
    expect((await eventsOf('team.updated')).filter((e) => e.data.team_id === team.id)).toHaveLength(1);

    const { site } = await call('POST', '/api/sites', { domain: 'outbox.example', team_id: team.id }, 201);
    await theEvent('site.created', { site_id: site.id, domain: 'outbox.example', team_id: team.id });
    await call('PATCH', `/api/sites/${site.id}`, { domain: 'outbox2.example' }, 200);
    await theEvent('site.updated', { site_id: site.id, domain: 'outbox2.example', team_id: team.id });
    await call('POST', `/api/sites/${site.id}/transfer-team`, { team_id: t.team.id }, 200);
    await theEvent('site.updated', { site_id: site.id, domain: 'outbox2.example', team_id: t.team.id });
    await call('DELETE', `/api/sites/${site.id}`, undefined, 204);
    await theEvent('site.deleted', { site_id: site.id, domain: 'outbox2.example', team_id: t.team.id });

    // Goal events reach the site's own webhook and the instance webhook.
    const { goal } = await call('POST', `/api/sites/${t.site.id}/goals`, { name: 'Outbox goal', type: 'event', event_name: 'Signup' }, 201);
    const goalData = { site_id: t.site.id, goal_id: goal.id, goal_name: 'Outbox goal', goal_type: 'event' };
    await theEvent('goal.created', goalData, 2);
    await call('PATCH', `/api/sites/${t.site.id}/goals/${goal.id}`, { name: 'Outbox goal 2' }, 200);
    await theEvent('goal.updated', { ...goalData, goal_name: 'Outbox goal 2' }, 2);
    await call('DELETE', `/api/sites/${t.site.id}/goals/${goal.id}`, undefined, 204);
    await theEvent('goal.deleted', { ...goalData, goal_name: 'Outbox goal 2' }, 2);

    const member = await person(t, 'user');
    expect((await joinTeam(t, owner, team.id, member, 'member')).status).toBe(200);
    await theEvent('team.member.added', { team_id: team.id, user_id: member.id, email: member.email, role: 'member' });
    await call('DELETE', `/api/user/teams/${team.id}/members/${member.id}`, undefined, 200);
    await theEvent('team.member.removed', { team_id: team.id, user_id: member.id, email: member.email, role: 'member' });

    const invited = await call('POST', `/api/user/teams/${team.id}/members`, { email: 'outbox-invitee@example.com', role: 'admin' }, 201);
    const accepted = await as(t, undefined, 'POST', '/api/auth/accept-invite', { token: invited.invite_token, password: 'a long enough password' });
    expect(accepted.status).toBe(201);
    const joined = accepted.body.user as { id: string };
    await theEvent('team.member.added', { team_id: team.id, user_id: joined.id, email: 'outbox-invitee@example.com', role: 'admin' });

    const { user } = await call('POST', '/api/admin/users', { email: 'outbox-user@example.com', password: 'a long enough password', role: 'user' }, 201);
    await theEvent('system.user.updated', { user_id: user.id, email: 'outbox-user@example.com', role: 'user' });
    await call('PATCH', `/api/admin/users/${user.id}`, { role: 'admin' }, 200);
    await theEvent('system.user.updated', { user_id: user.id, email: 'outbox-user@example.com', role: 'admin' });
    await call('DELETE', `/api/admin/users/${user.id}`, undefined, 204);
    await theEvent('system.user.deleted', { user_id: user.id, email: 'outbox-user@example.com', role: 'admin' });

    const archived = await call('POST', `/api/user/teams/${team.id}/archive`, undefined, 200);
    await theEvent('team.archived', { team_id: team.id, name: 'Outbox team 2', archived_at: archived.archived_at });
  }, 60_000);

  it('a change whose transaction fails leaves no event, even one that had queued it', async () => {
    // A store whose transactions run the whole use case, then fail instead of committing.
    const store = db();
    const refusing: MetadataStore = {
      kind: store.kind,
      query: <T>(sql: string, params?: unknown[]) => store.query<T>(sql, params),
      transaction: <T>(fn: (tx: MetadataQueryable) => Promise<T>) =>
        store.transaction<T>(async (tx) => {
          await fn(tx);
          throw new Error('refused at commit');
        }),
      migrate: () => store.migrate(),
      ping: () => store.ping(),
      close: () => store.close(),
    };
    await expect(createGoal(refusing, owner, t.site.id, { name: 'Never committed', type: 'event', event_name: 'Never' })).rejects.toThrow('refused at commit');
    expect((await eventsOf('goal.created')).filter((e) => e.data.goal_name === 'Never committed')).toEqual([]);
    expect((await db().query("SELECT id FROM goals WHERE name = 'Never committed'")).rows).toEqual([]);

    const team = await call('POST', '/api/user/teams', { name: 'Rollback team' }, 201);
    const member = await person(t, 'user');
    expect((await joinTeam(t, owner, team.id, member, 'member')).status).toBe(200);
    await expect(removeMember(refusing, owner, team.id, member.id)).rejects.toThrow('refused at commit');
    expect((await eventsOf('team.member.removed')).filter((e) => e.data.team_id === team.id)).toEqual([]);

    // Refused by a rule (the last owner cannot leave): no event either.
    expect((await as(t, owner, 'DELETE', `/api/user/teams/${team.id}/members/${owner.id}`)).status).toBe(409);
    expect((await eventsOf('team.member.removed')).filter((e) => e.data.team_id === team.id)).toEqual([]);
  });
});

describe('once the webhooks service runs again', () => {
  it('sends every queued delivery, each once, without a bus event to prompt it', async () => {
    const { rows: queued } = await db().query<{ id: string; event_id: string; webhook: string }>(
      `SELECT d.id, d.event_id, w.name AS webhook FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id WHERE d.status = 'pending'`,
    );
    const site = queued.filter((d) => d.webhook === 'site');
    const instance = queued.filter((d) => d.webhook === 'instance');
    const { rows: events } = await db().query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_events');
    // The three goal events went to the site webhook too; every event went to the instance webhook.
    expect(site).toHaveLength(3);
    expect(instance).toHaveLength(events[0].n);

    const broker = t.node.broker;
    broker.createService(createWebhooksService(t.node.runtime));
    await broker.waitForServices('webhooks');
    await receiver.waitFor('/site', site.length, 20_000);
    await receiver.waitFor('/instance', instance.length, 20_000);
    const sent = (path: string) => receiver.at(path).map((r) => (JSON.parse(r.raw.toString('utf8')) as { delivery_id: string }).delivery_id);
    expect(sent('/site').sort()).toEqual(site.map((d) => d.id).sort());
    expect(sent('/instance').sort()).toEqual(instance.map((d) => d.id).sort());
  }, 60_000);
});
