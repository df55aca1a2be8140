// How a node is composed and goes through its life, as a plugin sees it: services start before
// the stores, the "stores ready" hooks run with the stores open before the node reports ready,
// leader jobs start after that and stop first; services can be stopped and started again; and
// nothing in a running node can be switched into a test mode.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ServiceSchema } from 'moleculer';
import { createLocalElector } from '../../cluster/election/local.ts';
import { createRedisElector } from '../../cluster/election/redis.ts';
import { silentLog } from '../../lib/log.ts';
import type { Runtime } from '../../lib/runtime.ts';
import { transferSite } from '../../lib/sites/transfer.ts';
import { definePlugin, PLUGIN_API_VERSION, type PluginHost } from '../../lib/plugins/api.ts';
import { gatewayOf } from '../../services/api.service.ts';
import createIngestService from '../../services/ingest.service.ts';
import createWebhooksService from '../../services/webhooks.service.ts';
import { as, type Person, person } from '../support/accounts.ts';
import { startTestNode, type TestNode } from '../support/node.ts';
import { type Receiver, startReceiver } from '../support/webhook-receiver.ts';

/** What the probe plugin saw, in the order it saw it. */
const journal: string[] = [];

function storesOpen(runtime: Runtime): boolean {
  try {
    runtime.metadata();
    return true;
  } catch {
    return false;
  }
}

/** Whether the plugin's store answers: it cannot before the stores are open, and after they close. */
async function answers(host: PluginHost): Promise<boolean> {
  try {
    await host.metadata.query('SELECT 1');
    return true;
  } catch {
    return false;
  }
}

const probe = definePlugin({
  name: 'lifecycle-probe',
  version: '1.0.0',
  apiVersion: PLUGIN_API_VERSION,
  description: 'Records the node lifecycle as a plugin sees it',
  services(host): ServiceSchema[] {
    return [
      {
        name: 'plugins.lifecycle-probe',
        async started() {
          journal.push(`service started (store answers: ${await answers(host)})`);
          void host.whenStoresReady(async () => {
            const { rows } = await host.metadata.query<{ one: number }>('SELECT 1 AS one');
            journal.push(`stores ready (metadata answers ${rows[0].one})`);
          });
        },
        async stopped() {
          journal.push(`service stopped (store answers: ${await answers(host)})`);
        },
      },
    ];
  },
  leaderJobs(host) {
    return [
      {
        name: 'probe',
        job: {
          start(epoch) {
            journal.push(`leader job started (epoch ${epoch})`);
          },
          async stop() {
            journal.push(`leader job stopped (store answers: ${await answers(host)})`);
          },
        },
      },
    ];
  },
});

let t: TestNode;
let owner: Person;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
  t = await startTestNode(
    { PLUMB_PLUGINS: 'lifecycle-probe', PLUMB_WEBHOOK_ALLOW_DEVELOPMENT_TARGETS: 'true', PLUMB_WEBHOOK_SWEEP_SECONDS: '1' },
    { firstPartyPlugins: { 'lifecycle-probe': async () => ({ default: probe }) } },
  );
  owner = await person(t, 'owner');
}, 60_000);

afterAll(async () => {
  await t?.stop();
  await receiver?.close();
});

describe('a node starting', () => {
  it('starts the services, then runs the stores-ready hooks with the stores open, then reports ready, then starts leader jobs', () => {
    expect(journal).toEqual([
      'service started (store answers: false)',
      'stores ready (metadata answers 1)',
      'leader job started (epoch 1)',
    ]);
  });
});

describe('a service stopped and started again on the running node', () => {
  async function restart(name: string, create: () => ServiceSchema) {
    const { broker } = t.node;
    await broker.destroyService(broker.getLocalService(name)!);
    broker.createService(create());
    await broker.waitForServices(name);
    gatewayOf(broker).refreshRoutes();
  }

  it('starts again without a second registration of its leader jobs, and its leader work runs once', async () => {
    await expect(restart('ingest', () => createIngestService(t.node.runtime))).resolves.toBeUndefined();
    await restart('webhooks', () => createWebhooksService(t.node.runtime));
    await restart('webhooks', () => createWebhooksService(t.node.runtime));

    const base = `/api/sites/${t.site.id}/webhooks`;
    const created = await as(t, owner, 'POST', base, { name: 'after restart', url: `${receiver.url}/after-restart`, events: ['webhook.test'] });
    expect(created.status).toBe(201);
    const hook = created.body.webhook as { id: string };
    expect((await as(t, owner, 'POST', `${base}/${hook.id}/test`)).status).toBe(202);
    await receiver.waitFor('/after-restart', 1, 15_000);
    // Two sweeps later, still one request: one dispatcher runs, not one per service instance.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(receiver.at('/after-restart')).toHaveLength(1);
  }, 60_000);
});

describe('a node built by the production composition', () => {
  it('exposes no test hooks: electors only elect, the events service has no feed introspection, a site move takes no callback', () => {
    const redis = createRedisElector({ redisUrl: 'redis://127.0.0.1:1', nodeId: 'n', leaseMs: 3000, log: silentLog });
    expect(Object.keys(redis).sort()).toEqual(['isLeader', 'kind', 'onChange', 'start', 'state', 'stop']);
    expect(Object.keys(createLocalElector('n')).sort()).toEqual(['isLeader', 'kind', 'onChange', 'start', 'state', 'stop']);
    expect(Object.keys(t.node.runtime.elector).sort()).toEqual(['isLeader', 'kind', 'onChange', 'start', 'state', 'stop']);
    const events = t.node.broker.getLocalService('events') as unknown as Record<string, unknown>;
    expect(events.realtimeFeeds).toBeUndefined();
    expect(transferSite.length).toBe(2);
  });
});

describe('a node stopping', () => {
  it('stops leader jobs first, while the stores are open, then the services, then the stores', async () => {
    journal.length = 0;
    await t.node.stop();
    expect(journal).toEqual(['leader job stopped (store answers: true)', 'service stopped (store answers: true)']);
    expect(storesOpen(t.node.runtime)).toBe(false);
  });
});
