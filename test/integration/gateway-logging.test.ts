// What the gateway writes to the log: one line per failed request, through Plumb's log, and
// nothing for what is not a failure (a 503 while starting, a browser closing an event stream).
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ServiceBroker } from 'moleculer';
import pino from 'pino';
import { loadConfig } from '../../lib/config.ts';
import { moleculerLogger } from '../../lib/log.ts';
import type { Runtime } from '../../lib/runtime.ts';
import { brokerOptions } from '../../moleculer.config.ts';
import createApiService, { gatewayOf } from '../../services/api.service.ts';
import { createNodeMetrics } from '../../lib/metrics/metrics.ts';
import { request, tempDataDir } from '../support/instance.ts';

const lines: { level: number; msg?: string }[] = [];
const log = pino(
  { level: 'info' },
  {
    write(line: string) {
      lines.push(JSON.parse(line));
    },
  },
);
const config = loadConfig({ env: { PLUMB_DATA_DIR: tempDataDir('plumb-gateway-log-'), PLUMB_PORT: '0', PLUMB_HOST: '127.0.0.1', PLUMB_LOG_LEVEL: 'info' } });
const runtime = { config, log, rateLimits: { consume: () => undefined }, apiClients: { verify: async () => null }, metrics: createNodeMetrics() } as unknown as Runtime;
const feeds: PassThrough[] = [];

const failing = {
  name: 'failing',
  settings: { rest: '/' },
  actions: {
    boom: { rest: 'GET /api/boom', handler: () => Promise.reject(new Error('the database is on fire')) },
    away: { rest: 'GET /api/away', handler: () => Promise.reject(Object.assign(new Error('starting'), { code: 503, type: 'SERVICE_NOT_AVAILABLE' })) },
    feed: {
      rest: 'GET /api/feed',
      handler(ctx: { meta: { $responseType?: string } }) {
        const stream = new PassThrough();
        feeds.push(stream);
        ctx.meta.$responseType = 'text/event-stream';
        stream.write('data: hello\n\n');
        return stream;
      },
    },
  },
};

let broker: ServiceBroker;
let base: string;

beforeAll(async () => {
  broker = new ServiceBroker({ ...brokerOptions(config, [], log), logger: moleculerLogger(log, 'info') as never, nodeID: 'gateway-log-test' });
  broker.createService(createApiService(runtime));
  broker.createService(failing as never);
  await broker.start();
  gatewayOf(broker).refreshRoutes();
  const address = gatewayOf(broker).server.address();
  base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
});

afterAll(() => broker.stop());

const errorsAndWarnings = () => lines.filter((line) => line.level >= 40);

describe('the gateway log', () => {
  it('has one error line, written by Plumb, for a request that failed', async () => {
    lines.length = 0;
    const res = await request(`${base}/api/boom`);
    expect(res.status).toBe(500);
    expect(errorsAndWarnings().map((line) => line.msg)).toEqual(['request failed']);
  });

  it('has nothing for a 503', async () => {
    lines.length = 0;
    expect((await request(`${base}/api/away`)).status).toBe(503);
    expect(errorsAndWarnings()).toEqual([]);
  });

  it('has nothing when a browser closes an event stream', async () => {
    lines.length = 0;
    const controller = new AbortController();
    const res = await fetch(`${base}/api/feed`, { signal: controller.signal });
    const reader = res.body!.getReader();
    await reader.read();
    controller.abort();
    while (!feeds.at(-1)!.destroyed) await new Promise((resolve) => setTimeout(resolve, 10));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(errorsAndWarnings()).toEqual([]);
  });
});
