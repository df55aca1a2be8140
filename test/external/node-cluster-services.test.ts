// A Plumb node against the real cluster services on loopback: it takes the Redis leader lease
// and gives it back on SIGTERM, and brokers built from moleculer.config.ts talk over real NATS.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { ServiceBroker } from 'moleculer';
import { loadConfig } from '../../lib/config.ts';
import { brokerOptions } from '../../moleculer.config.ts';
import { request, startInstance } from '../support/instance.ts';
import { NATS_URL, REDIS_URL } from '../support/services.ts';

const redisUrl = REDIS_URL;
const natsUrl = NATS_URL;

describe('plumb serve with PLUMB_REDIS_URL', () => {
  const namespace = `plumbtest${randomBytes(4).toString('hex')}`;
  let redis: Redis;

  beforeAll(async () => {
    redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 0 });
    await redis.connect().catch((err: Error) => {
      throw new Error(`Redis is not reachable at ${redisUrl} (${err.message}); these tests never skip.`);
    });
  });

  afterAll(async () => {
    await redis.del(`${namespace}:leader`, `${namespace}:leader:epoch`);
    redis.disconnect();
  });

  it('holds the lease under its namespace while running and releases it on SIGTERM', async () => {
    const instance = await startInstance({ env: { PLUMB_REDIS_URL: redisUrl, PLUMB_NAMESPACE: namespace, PLUMB_NODE_ID: 'lease-test-node' } });
    expect((await request(`${instance.url}/readyz`)).body).toEqual({ status: 'ready', leader: true });
    expect(await redis.get(`${namespace}:leader`)).toContain('lease-test-node');
    expect((await instance.stop()).code).toBe(0);
    expect(await redis.get(`${namespace}:leader`)).toBeNull();
    await instance.destroy();
  });
});

describe('brokers over the NATS transporter', () => {
  const namespace = `plumbtest${randomBytes(4).toString('hex')}`;
  const env = {
    PLUMB_TRANSPORTER: natsUrl,
    PLUMB_NAMESPACE: namespace,
    PLUMB_DATABASE_URL: 'postgres://unused@127.0.0.1/unused',
    PLUMB_CLICKHOUSE_URL: 'http://127.0.0.1:1',
    PLUMB_JWT_SECRET: 'x'.repeat(40),
    PLUMB_LOG_LEVEL: 'silent',
  };
  const brokers: ServiceBroker[] = [];

  afterAll(() => Promise.all(brokers.map((b) => b.stop())));

  it('discover each other and call actions across nodes', async () => {
    const a = new ServiceBroker(brokerOptions(loadConfig({ env: { ...env, PLUMB_NODE_ID: 'node-a' } })));
    const b = new ServiceBroker(brokerOptions(loadConfig({ env: { ...env, PLUMB_NODE_ID: 'node-b' } })));
    brokers.push(a, b);
    a.createService({ name: 'greeter', actions: { hello: (ctx: { params: { name: string } }) => `hello ${ctx.params.name} from node-a` } });
    await Promise.all([a.start(), b.start()]).catch((err: Error) => {
      throw new Error(`NATS is not reachable at ${natsUrl} (${err.message}); these tests never skip.`);
    });
    await b.waitForServices('greeter', 10_000);
    expect(await b.call('greeter.hello', { name: 'plumb' })).toBe('hello plumb from node-a');
  });
});
