// The gateway's contract with every route: explicit aliases only, JSON errors with the right
// status, per-action body limits, request ids, cross-origin protection, OpenAPI from the routes,
// HEAD wherever GET is answered, and the Location of what a route creates.
import { CORE_SCOPES } from '../../lib/auth/roles.ts';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ServiceBroker } from 'moleculer';
import { loadConfig } from '../../lib/config.ts';
import { journalSink } from '../../lib/ingest/sink.ts';
import { silentLog } from '../../lib/log.ts';
import { NoContent } from '../../lib/openapi/responses.ts';
import { createNodeMetrics } from '../../lib/metrics/metrics.ts';
import type { Runtime } from '../../lib/runtime.ts';
import { createValidator } from '../../lib/validation.ts';
import { gatewayOf } from '../../services/api.service.ts';
import { SERVICE_FACTORIES } from '../../services/index.ts';
import { fullGarbageCollection } from '../support/garbage.ts';
import { request, tempDataDir } from '../support/instance.ts';

const config = loadConfig({ env: { PLUMB_DATA_DIR: tempDataDir('plumb-gateway-'), PLUMB_PORT: '0', PLUMB_HOST: '127.0.0.1', PLUMB_PUBLIC_URL: 'https://stats.example.com', PLUMB_LOG_LEVEL: 'silent' } });
// A node whose stores are still opening: enough for the gateway and the node service.
const runtime = {
  config,
  log: silentLog,
  isReady: () => false,
  elector: { isLeader: () => false },
  leaderJobs: { register: () => async () => undefined },
  webhookDispatch: { plug: () => async () => undefined },
  mailDispatch: { plug: () => async () => undefined },
  importRunner: { plug: () => async () => undefined },
  whenStoresReady: async () => undefined,
  rateLimits: { consume: async () => undefined },
  apiClients: { verify: async () => null },
  apiScopes: CORE_SCOPES,
  addedWebhookEvents: [],
  metrics: createNodeMetrics(),
  // Nothing is ingested here; the journal only has to open for the ingest service to start.
  openIngestSink: journalSink(
    config,
    silentLog,
    () => {
      throw new Error('no analytics store in the gateway test');
    },
    async () => undefined,
  ),
} as unknown as Runtime;

const echoService = {
  name: 'echo',
  settings: { rest: '/' },
  actions: {
    create: {
      rest: 'POST /api/echo/:id',
      params: { id: 'uuid', name: 'string|min:1|max:20', count: 'number|integer|min:0|optional' },
      openapi: { summary: 'Echo a thing' },
      handler: (ctx: { params: unknown }) => ({ received: ctx.params }),
    },
    small: {
      rest: 'POST /api/echo-small',
      bodyLimit: 64,
      params: { text: 'string' },
      handler: () => ({ ok: true }),
    },
    beacon: {
      rest: 'POST /collect',
      crossOrigin: true,
      textBody: true,
      params: { url: 'string' },
      handler: () => ({ ok: true }),
    },
    // A tracker-like action on the gateway's hot path, answered in front of moleculer-web's routing.
    hotBeacon: {
      rest: 'POST /collect-hot',
      crossOrigin: true,
      textBody: true,
      hotPath: true,
      params: { url: 'string' },
      openapi: { summary: 'A beacon on the hot path', successStatus: 202, response: NoContent },
      async handler(ctx: { params: { url: string }; requestID: string; meta: { request: { origin?: string }; $statusCode?: number } }) {
        hotCalls.push({ url: ctx.params.url, origin: ctx.meta.request.origin, requestID: ctx.requestID });
        if (ctx.params.url === 'https://a.example/slow') {
          await hotGate.promise;
          // A service stopped under a running call would have closed what the call still needs.
          if (echoStopped) throw new Error('the service stopped during the call');
        }
        ctx.meta.$statusCode = 202;
        return null;
      },
    },
    show: {
      rest: 'GET /api/echo-items/:id',
      params: { id: 'uuid' },
      handler: (ctx: { params: { id: string } }) => ({ id: ctx.params.id, note: 'a body HEAD must leave out' }),
    },
    feed: {
      rest: 'GET /api/echo-feed',
      handler(ctx: { meta: { $responseType?: string } }) {
        const stream = new PassThrough();
        feeds.push(stream);
        ctx.meta.$responseType = 'text/event-stream';
        stream.write('data: hello\n\n');
        return stream;
      },
    },
    make: {
      rest: 'POST /api/echo-lists/:id/items',
      location: '/api/echo-lists/:id/items/{item.id}',
      params: { id: 'string', name: 'string' },
      openapi: { summary: 'Add an item to a list', successStatus: 201 },
      handler(ctx: { params: { name: string }; meta: { $statusCode?: number } }) {
        ctx.meta.$statusCode = 201;
        return { item: { id: ctx.params.name } };
      },
    },
    invite: {
      rest: 'POST /api/echo-invites',
      location: ['/api/echo-members/{member.id}', '/api/echo-invitations/{invitation.id}'],
      openapi: { summary: 'Invite someone', successStatus: 201 },
      handler(ctx: { meta: { $statusCode?: number } }) {
        ctx.meta.$statusCode = 201;
        return { invitation: { id: 'inv-1' } };
      },
    },
    list: {
      rest: 'GET /api/echo',
      params: { limit: { type: 'number', integer: true, min: 1, max: 200, default: 25, convert: true } },
      handler: (ctx: { params: unknown }) => ctx.params,
    },
    boom: {
      rest: 'GET /api/echo-boom',
      handler: () => {
        throw new Error('database password is hunter2');
      },
    },
    internal: { handler: () => ({ secret: true }) },
  },
  stopped() {
    echoStopped = true;
  },
};

const hotCalls: { url: string; origin?: string; requestID: string }[] = [];
const feeds: PassThrough[] = [];
const hotGate = Promise.withResolvers<void>();
let echoStopped = false;
let broker: ServiceBroker;
let stopping: Promise<void> | undefined;
let base: string;
const id = '0b6f2c1e-8a55-4f55-9a3c-6e0d7b1f4a21';
const json = (body: unknown, headers: Record<string, string> = {}) => ({
  method: 'POST',
  headers: { 'Content-Type': 'application/json', ...headers },
  body: typeof body === 'string' ? body : JSON.stringify(body),
});

beforeAll(async () => {
  // Context tracking on, as a Plumb node's broker has it: a stopping service waits for its calls.
  broker = new ServiceBroker({ logger: false, nodeID: 'gateway-test', validator: createValidator(), tracking: { enabled: true, shutdownTimeout: 10_000 } });
  for (const factory of SERVICE_FACTORIES) broker.createService(factory(runtime));
  broker.createService(echoService as never);
  await broker.start();
  const gateway = gatewayOf(broker);
  gateway.refreshRoutes();
  const server = gateway.server;
  const address = server.address();
  base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
});

afterAll(() => stopping ?? broker.stop());

describe('routing', () => {
  it('answers a declared alias with path, body and query merged into params', async () => {
    const res = await request(`${base}/api/echo/${id}`, json({ name: 'x', count: 3 }));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ received: { id, name: 'x', count: 3 } });
  });

  it('does not let the body override a path parameter', async () => {
    const res = await request(`${base}/api/echo/${id}`, json({ id: '11111111-1111-4111-8111-111111111111', name: 'x' }));
    expect(res.body).toEqual({ received: { id, name: 'x' } });
  });

  it('never reaches an action without a rest alias', async () => {
    for (const path of ['/echo/internal', '/api/echo/internal', '/echo.internal', '/$node/list', '/api/list-aliases', '/api/api/list-aliases']) {
      const res = await request(`${base}${path}`);
      expect({ path, status: res.status, code: res.body.code }).toEqual({ path, status: 404, code: 'not_found' });
    }
  });

  it('answers an unknown API path with a JSON 404', async () => {
    const res = await request(`${base}/api/nothing-here`, { headers: { accept: 'text/html' } });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ message: 'No route for GET /api/nothing-here', code: 'not_found' });
  });
});

describe('errors', () => {
  it('turns a validation failure into 400 with the failing fields', async () => {
    const res = await request(`${base}/api/echo/not-a-uuid`, json({ name: '', count: -1 }));
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_failed');
    expect((res.body.fields as { field: string }[]).map((f) => f.field).sort()).toEqual(['count', 'id', 'name']);
  });

  it('converts and defaults query parameters', async () => {
    expect((await request(`${base}/api/echo?limit=50`)).body).toEqual({ limit: 50 });
    expect((await request(`${base}/api/echo`)).body).toEqual({ limit: 25 });
    expect((await request(`${base}/api/echo?limit=500`)).status).toBe(400);
  });

  it('refuses invalid JSON with 400 invalid_json', async () => {
    const res = await request(`${base}/api/echo/${id}`, json('{"name": "x",'));
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_json');
  });

  it('refuses a JSON array or scalar body', async () => {
    expect((await request(`${base}/api/echo/${id}`, json('[1,2]'))).body.code).toBe('invalid_json');
    expect((await request(`${base}/api/echo/${id}`, json('"x"'))).body.code).toBe('invalid_json');
  });

  it('refuses a non-JSON content type with 415', async () => {
    const res = await request(`${base}/api/echo/${id}`, { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: '{"name":"x"}' });
    expect(res.status).toBe(415);
    expect(res.body.code).toBe('unsupported_media_type');
  });

  it('hides the text of an unexpected error behind a generic 500', async () => {
    const res = await request(`${base}/api/echo-boom`);
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ message: 'Internal server error', code: 'internal_error' });
    expect(res.text).not.toContain('hunter2');
  });
});

describe('body limits', () => {
  it('answers 413 past the action limit, declared or streamed', async () => {
    const big = JSON.stringify({ text: 'x'.repeat(100) });
    const res = await request(`${base}/api/echo-small`, json(big));
    expect(res.status).toBe(413);
    expect(res.body.code).toBe('payload_too_large');
    const streamed = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(big));
        controller.close();
      },
    });
    const chunked = await request(`${base}/api/echo-small`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: streamed, duplex: 'half' } as RequestInit);
    expect(chunked.status).toBe(413);
  });

  it('applies the API default limit elsewhere', async () => {
    const res = await request(`${base}/api/echo/${id}`, json({ name: 'x', pad: 'y'.repeat(config.apiBodyLimitBytes) }));
    expect(res.status).toBe(413);
  });

  it('accepts text/plain JSON only where the action allows it', async () => {
    const res = await request(`${base}/collect`, { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: '{"url":"https://a.example/"}' });
    expect(res.status).toBe(200);
  });
});

describe('request id', () => {
  it('echoes a well-formed X-Request-ID and replaces a hostile one', async () => {
    expect((await request(`${base}/api/echo`, { headers: { 'X-Request-ID': 'abc-123' } })).headers.get('x-request-id')).toBe('abc-123');
    const replaced = (await request(`${base}/api/echo`, { headers: { 'X-Request-ID': 'bad id\twith spaces' } })).headers.get('x-request-id');
    expect(replaced).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('cross-origin request protection', () => {
  it('rejects an unsafe cross-site request with 403', async () => {
    const res = await request(`${base}/api/echo/${id}`, json({ name: 'x' }, { 'Sec-Fetch-Site': 'cross-site', Cookie: 'plumb_session=x' }));
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('cross_origin_rejected');
  });

  it('rejects a same-site (sibling subdomain) request', async () => {
    expect((await request(`${base}/api/echo/${id}`, json({ name: 'x' }, { 'Sec-Fetch-Site': 'same-site' }))).status).toBe(403);
  });

  it('falls back to Origin against Host when Fetch Metadata is absent', async () => {
    expect((await request(`${base}/api/echo/${id}`, json({ name: 'x' }, { Origin: 'https://evil.example' }))).status).toBe(403);
    expect((await request(`${base}/api/echo/${id}`, json({ name: 'x' }, { Origin: base }))).status).toBe(200);
    expect((await request(`${base}/api/echo/${id}`, json({ name: 'x' }, { Origin: 'https://stats.example.com' }))).status).toBe(200);
  });

  it('lets same-origin and non-browser requests through', async () => {
    expect((await request(`${base}/api/echo/${id}`, json({ name: 'x' }, { 'Sec-Fetch-Site': 'same-origin' }))).status).toBe(200);
    expect((await request(`${base}/api/echo/${id}`, json({ name: 'x' }))).status).toBe(200);
  });

  it('keeps safe methods allowed cross-site', async () => {
    expect((await request(`${base}/api/echo`, { headers: { 'Sec-Fetch-Site': 'cross-site' } })).status).toBe(200);
  });

  it('exempts routes declared crossOrigin (the tracker ingest)', async () => {
    const res = await request(`${base}/collect`, {
      method: 'POST',
      headers: { 'Content-Type': 'text/plain', 'Sec-Fetch-Site': 'cross-site', Origin: 'https://customer.example' },
      body: '{"url":"https://customer.example/"}',
    });
    expect(res.status).toBe(200);
  });
});

describe('GET /api/docs/v1/openapi.json', () => {
  it('documents every alias with its parameters', async () => {
    const res = await request(`${base}/api/docs/v1/openapi.json`);
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    const paths = res.body.paths as Record<string, Record<string, { parameters?: { name: string; in: string }[]; requestBody?: { content: Record<string, { schema: Record<string, unknown> }> } }>>;
    expect(Object.keys(paths)).toEqual(expect.arrayContaining(['/api/docs/v1/openapi.json', '/api/echo', '/api/echo-boom', '/api/echo-small', '/api/echo/{id}', '/collect', '/plumb.js']));
    const create = paths['/api/echo/{id}'].post;
    expect(create.parameters).toEqual([{ name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } }]);
    expect(create.requestBody!.content['application/json'].schema).toEqual({
      type: 'object',
      properties: { name: { type: 'string', minLength: 1, maxLength: 20 }, count: { type: 'integer', minimum: 0 } },
      required: ['name'],
    });
    expect(paths['/api/echo'].get.parameters).toEqual([{ name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 200, default: 25 } }]);
  });
});

describe('every route a service declares', () => {
  it('appears in the OpenAPI document with its method', async () => {
    const declared = SERVICE_FACTORIES.flatMap((factory) =>
      Object.values(factory(runtime).actions ?? {}).flatMap((action) => {
        const rest = typeof action === 'object' && action ? (action as { rest?: string | string[] }).rest : undefined;
        return rest === undefined ? [] : [rest].flat();
      }),
    );
    expect(declared.length).toBeGreaterThan(0);
    const paths = (await request(`${base}/api/docs/v1/openapi.json`)).body.paths as Record<string, Record<string, unknown>>;
    for (const rest of declared) {
      const [method, path] = rest.split(' ');
      const documented = paths[path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')];
      expect({ rest, documented: documented?.[method.toLowerCase()] !== undefined }).toEqual({ rest, documented: true });
    }
  });
});

describe('HEAD', () => {
  /** The headers of an answer but those that differ between any two (and fetch's HEAD asks to close the connection). */
  const headersOf = (res: { headers: Headers }) =>
    Object.fromEntries([...res.headers].filter(([name]) => !['date', 'x-request-id', 'connection', 'keep-alive'].includes(name)));

  it('is answered wherever GET is, with the same status and headers and no body', async () => {
    const paths = [`/api/echo-items/${id}`, '/api/echo?limit=3', '/api/docs/v1/openapi.json', '/plumb.js', '/healthz', '/readyz', '/api/echo-items/not-a-uuid'];
    for (const path of paths) {
      const get = await request(`${base}${path}`);
      const head = await request(`${base}${path}`, { method: 'HEAD' });
      expect({ path, status: head.status, headers: headersOf(head), body: head.text }).toEqual({
        path,
        status: get.status,
        headers: headersOf(get),
        body: '',
      });
    }
  });

  it('answers a route that does not exist with a 404 naming HEAD, and no body', async () => {
    const head = await request(`${base}/api/nothing-here`, { method: 'HEAD' });
    const length = Buffer.byteLength(JSON.stringify({ message: 'No route for HEAD /api/nothing-here', code: 'not_found' }));
    expect([head.status, head.headers.get('content-type'), head.headers.get('content-length'), head.text]).toEqual([404, 'application/json; charset=utf-8', String(length), '']);
  });

  it('says how long the body GET would send', async () => {
    const get = await request(`${base}/api/echo-items/${id}`);
    const head = await request(`${base}/api/echo-items/${id}`, { method: 'HEAD' });
    expect(head.headers.get('content-length')).toBe(String(Buffer.byteLength(get.text)));
  });

  it('answers an event stream with its headers at once and closes the stream unread', async () => {
    const head = await request(`${base}/api/echo-feed`, { method: 'HEAD' });
    expect([head.status, head.headers.get('content-type'), head.text]).toEqual([200, 'text/event-stream', '']);
    expect(feeds.at(-1)!.destroyed).toBe(true);
  });
});

describe('Location of a created resource', () => {
  it('fills the declared template from the request parameters and the answer, encoded', async () => {
    const res = await request(`${base}/api/echo-lists/groceries/items`, json({ name: 'oat milk' }));
    expect([res.status, res.headers.get('location')]).toEqual([201, '/api/echo-lists/groceries/items/oat%20milk']);
  });

  it('takes the first template the answer fills', async () => {
    const res = await request(`${base}/api/echo-invites`, json({}));
    expect([res.status, res.headers.get('location')]).toEqual([201, '/api/echo-invitations/inv-1']);
  });
});

describe('GET /readyz', () => {
  it('answers 503 with Retry-After while the stores are not open, while /healthz answers 200', async () => {
    const ready = await request(`${base}/readyz`);
    expect(ready.status).toBe(503);
    expect(ready.body).toEqual({ message: 'Stores are not ready', code: 'unavailable' });
    expect(ready.headers.get('retry-after')).toBe('1');
    expect((await request(`${base}/healthz`)).status).toBe(200);
  });
});

describe('between requests', () => {
  it("keeps the last answer and its request referenced, so an idle node's full garbage collections leave V8's shapes for them in place", async () => {
    const collectGarbage = fullGarbageCollection();
    const { server } = gatewayOf(broker);
    // Each request's answer, watched without being held: the last one is what the node keeps.
    let answered: WeakRef<ServerResponse> | undefined;
    const watch = (_req: IncomingMessage, res: ServerResponse) => {
      answered = new WeakRef(res);
    };
    server.prependListener('request', watch);
    try {
      expect((await request(`${base}/healthz`)).status).toBe(200);
    } finally {
      server.off('request', watch);
    }
    // A later turn of the event loop, as an idle node's collections run: the WeakRef no longer holds it.
    await new Promise((resolve) => setTimeout(resolve, 10));
    collectGarbage();
    collectGarbage();
    // The contract check sends a request of its own after the one above: the last answer is the one kept.
    expect(answered?.deref()?.writableFinished).toBe(true);
    expect(answered?.deref()?.req).toBeDefined();
  });
});

describe('hot path of public tracker actions', () => {
  const beacon = (path: string, body: string, headers: Record<string, string> = {}) =>
    request(`${base}${path}`, { method: 'POST', headers: { 'Content-Type': 'text/plain', Origin: 'https://customer.example', ...headers }, body });
  const sharedHeaders = (res: { headers: Headers }) =>
    Object.fromEntries(['x-request-id', 'x-content-type-options', 'access-control-allow-origin', 'access-control-allow-methods', 'access-control-max-age'].map((name) => [name, res.headers.get(name)]));
  // The methods and max age are the preflight's to say.
  const expectedHeaders = {
    'x-request-id': 'hot-1',
    'x-content-type-options': 'nosniff',
    'access-control-allow-origin': '*',
    'access-control-allow-methods': null,
    'access-control-max-age': null,
  };

  it('runs the action with its params and request meta, answering its success status with no body', async () => {
    const res = await beacon('/collect-hot', '{"url":"https://a.example/"}', { 'X-Request-ID': 'hot-1' });
    expect(res.status).toBe(202);
    expect(res.text).toBe('');
    expect(res.headers.get('content-length')).toBe('0');
    // Nothing to sniff, frame or run: the content headers go with answers that have content.
    expect(sharedHeaders(res)).toEqual({ ...expectedHeaders, 'x-content-type-options': null });
    expect(res.headers.get('content-security-policy')).toBeNull();
    expect(hotCalls).toEqual([{ url: 'https://a.example/', origin: 'https://customer.example', requestID: 'hot-1' }]);
  });

  it('refuses invalid params with the same 400 as a call through the broker', async () => {
    const hot = await beacon('/collect-hot', '{"url":5}', { 'X-Request-ID': 'hot-1' });
    const routed = await beacon('/collect', '{"url":5}', { 'X-Request-ID': 'hot-1' });
    expect(hot.status).toBe(400);
    expect(hot.body).toEqual(routed.body);
    expect(sharedHeaders(hot)).toEqual(expectedHeaders);
    expect(sharedHeaders(routed)).toEqual(expectedHeaders);
    expect(hot.headers.get('content-security-policy')).toBe(routed.headers.get('content-security-policy'));
    expect(hot.body).toEqual({ message: 'url must be a string', code: 'validation_failed', fields: [{ field: 'url', message: 'url must be a string', type: 'string' }] });
    expect(hotCalls).toHaveLength(1);
  });

  it('hands the action the request id it answers with, when it made one up too', async () => {
    const res = await beacon('/collect-hot', '{"url":"https://a.example/made-up"}');
    expect(res.status).toBe(202);
    const answered = res.headers.get('x-request-id');
    expect(answered).toMatch(/^[0-9a-f-]{36}$/);
    expect(hotCalls.at(-1)).toEqual({ url: 'https://a.example/made-up', origin: 'https://customer.example', requestID: answered });
  });

  // Last in this file: it stops the broker.
  it('is waited for by its stopping service', async () => {
    const inFlight = beacon('/collect-hot', '{"url":"https://a.example/slow"}');
    while (!hotCalls.some((call) => call.url === 'https://a.example/slow')) await new Promise((resolve) => setTimeout(resolve, 10));
    stopping = broker.stop();
    // Long enough for an unwaited service to stop (the context tracker polls every 100 ms).
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(echoStopped).toBe(false);
    hotGate.resolve();
    expect((await inFlight).status).toBe(202);
    await stopping;
    expect(echoStopped).toBe(true);
  });
});
