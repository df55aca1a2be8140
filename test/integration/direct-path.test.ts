// Tracker requests on the direct path, through a real node over raw connections: a connection's
// tracker hits are read and answered by Plumb itself, byte for byte as Node's reader answers them;
// anything else on the connection, malformed or not, goes to Node with every byte, in order; Node's
// timeouts hold; a stopping node ends the connections it holds.
import type { IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { gatewayOf } from '../../services/api.service.ts';
import { exposedSamples } from '../support/metrics.ts';
import { startTestNode, type TestNode } from '../support/node.ts';
import { type RawAnswer, RawConnection, rawRequest } from '../support/raw-http.ts';

const TOKEN = 'direct-path-metrics-token';
const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';

let t: TestNode;
let ipCounter = 0;
/** Each request speaks from its own public IP (the node trusts one proxy hop), so rate limits stay apart. */
const nextIp = () => `8.9.${Math.floor(++ipCounter / 250)}.${(ipCounter % 250) + 1}`;
/** Requests Node's own reader has read (the direct path's never reach its 'request' event). */
let readByNode: IncomingMessage[] = [];
const countRead = (req: IncomingMessage) => readByNode.push(req);

/** A tracker hit's bytes; `headers` replace or add lines by name, a null value leaves one out. */
function hit(body: string, headers: Record<string, string | null> = {}, path = '/ingest'): string {
  const lines: Record<string, string | null> = {
    Host: 'plumb.test',
    'Content-Type': 'text/plain',
    Origin: 'https://example.com',
    'User-Agent': FIREFOX,
    'X-Forwarded-For': nextIp(),
    'X-Request-ID': 'direct-path-test',
    'Content-Length': String(Buffer.byteLength(body)),
    ...headers,
  };
  const head = Object.entries(lines).flatMap(([name, value]) => (value === null ? [] : [`${name}: ${value}`]));
  return rawRequest([`POST ${path} HTTP/1.1`, ...head], body);
}

const pageview = (path: string) => JSON.stringify({ url: `https://example.com${path}`, width: 1280 });
const HEALTH = rawRequest(['GET /healthz HTTP/1.1', 'Host: plumb.test']);

/** A connection Node reads from its first byte: it opened with a request the direct path leaves to Node. */
async function nodeConnection(): Promise<RawConnection> {
  const connection = await RawConnection.open(t.url);
  await connection.send(HEALTH);
  expect((await connection.answer())?.status).toBe(200);
  return connection;
}

/** Every answer to `bytes` on a fresh connection and on one Node reads, for comparison. */
async function answersBothWays(bytes: string | Buffer): Promise<{ direct: string[]; node: string[] }> {
  const texts = async (connection: RawConnection) => {
    await connection.send(bytes);
    const answers = (await connection.answers()).map((answer) => answer.text);
    connection.close();
    return answers;
  };
  // A generated request id differs from one answer to the other; nothing else may.
  const sameIds = (answers: string[]) => answers.map((text) => text.replace(/X-Request-ID: [0-9a-f-]{36}/, 'X-Request-ID: <generated>'));
  const direct = await texts(await RawConnection.open(t.url));
  const node = await texts(await nodeConnection());
  return { direct: sameIds(direct), node: sameIds(node) };
}

beforeAll(async () => {
  t = await startTestNode({
    PLUMB_TRUSTED_PROXY_HOPS: '1',
    PLUMB_INGEST_RATE_PER_SECOND: '3',
    PLUMB_INGEST_BURST: '2',
    PLUMB_METRICS_TOKEN: TOKEN,
    // A connection the node failed to end would hold its stop this long, past the test's timeout.
    PLUMB_SHUTDOWN_TIMEOUT_MS: '60000',
  });
  gatewayOf(t.node.broker).server.on('request', countRead);
});

afterAll(async () => {
  if (t) await t.stop().catch(() => undefined);
});

describe('tracker hits on a connection of their own', () => {
  it('answers and stores them without Node reading them', async () => {
    readByNode = [];
    const connection = await RawConnection.open(t.url);
    await connection.send(hit(pageview('/direct-one')));
    const first = await connection.answer();
    await connection.send(hit(pageview('/direct-two')));
    const second = await connection.answer();
    connection.close();
    for (const answer of [first, second]) {
      expect(answer?.status).toBe(202);
      expect(answer?.body).toBe('');
      expect(answer?.headers).toEqual([
        ['x-request-id', 'direct-path-test'],
        ['access-control-allow-origin', '*'],
        ['content-length', '0'],
        ['date', expect.any(String)],
        ['connection', 'keep-alive'],
        ['keep-alive', 'timeout=5'],
      ]);
    }
    expect(readByNode).toEqual([]);
    await t.rows('hits', 2, "path IN ('/direct-one', '/direct-two')");
  });

  it.each([
    ['a pageview', hit(pageview('/both-ways'))],
    ['an event', hit(JSON.stringify({ name: 'Signup', url: 'https://example.com/both-ways' }), {}, '/ingest/event')],
    ['an unknown site', hit(pageview('/x'), { Origin: 'https://unknown.example' })],
    ['no Origin', hit(pageview('/x'), { Origin: null })],
    ['a missing url', hit('{"width":3}')],
    ['invalid JSON', hit('{"url":')],
    ['a JSON array', hit('[1,2]')],
    ['an empty body', hit('')],
    ['JSON nested too deep', hit(`${'['.repeat(40)}${']'.repeat(40)}`)],
    ['a form body', hit('url=https://example.com/', { 'Content-Type': 'application/x-www-form-urlencoded' })],
    ['JSON sent as application/json', hit(pageview('/as-json'), { 'Content-Type': 'application/json' })],
    ['a client request id that is not safe to echo', hit(pageview('/x'), { 'X-Request-ID': 'a b', Origin: 'https://unknown.example' })],
  ])('answers %s byte for byte as Node reading it does', async (_case, bytes) => {
    const { direct, node } = await answersBothWays(bytes);
    expect(direct).toEqual(node);
    expect(direct).toHaveLength(1);
  });

  it('counts what it answers in the metrics: requests by route and status, and refusals by reason', async () => {
    const read = async () => exposedSamples(await (await fetch(`${t.url}/metrics`, { headers: { Authorization: `Bearer ${TOKEN}` } })).text());
    const accepted = 'plumb_http_request_duration_seconds_count{method="POST",route="/ingest",status="202"}';
    const refused = 'plumb_ingest_items_total{outcome="refused",reason="forbidden"}';
    const before = await read();
    const connection = await RawConnection.open(t.url);
    await connection.send(hit(pageview('/counted')) + hit(pageview('/x'), { Origin: 'https://unknown.example' }));
    expect((await connection.answer())?.status).toBe(202);
    expect((await connection.answer())?.status).toBe(403);
    connection.close();
    const after = await read();
    expect((after.get(accepted) ?? 0) - (before.get(accepted) ?? 0)).toBe(1);
    expect((after.get(refused) ?? 0) - (before.get(refused) ?? 0)).toBe(1);
  });

  it("refuses a client past its rate limit with 429, Retry-After and the CORS header, as Node's reader does", async () => {
    const ip = nextIp();
    const connection = await RawConnection.open(t.url);
    const statuses: number[] = [];
    let limited: RawAnswer | undefined;
    for (let i = 0; i < 7; i++) {
      await connection.send(hit(pageview('/limited'), { 'X-Forwarded-For': ip }));
      const answer = await connection.answer();
      statuses.push(answer?.status ?? 0);
      if (answer?.status === 429) limited = answer;
    }
    connection.close();
    expect(statuses.slice(0, 5)).toEqual([202, 202, 202, 202, 202]);
    expect(statuses.slice(5)).toEqual([429, 429]);
    expect(limited?.headers).toEqual(expect.arrayContaining([['access-control-allow-origin', '*'], ['retry-after', expect.any(String)]]));
    expect(JSON.parse(limited?.body ?? '')).toEqual({ message: 'Too many requests; retry later', code: 'rate_limited' });
    readByNode = [];
    const viaNode = await nodeConnection();
    await viaNode.send(hit(pageview('/limited'), { 'X-Forwarded-For': ip }));
    const nodeAnswer = await viaNode.answer();
    viaNode.close();
    expect(readByNode).toHaveLength(2);
    expect(nodeAnswer?.text.replace(/Retry-After: \d+/, 'Retry-After: n')).toBe(limited?.text.replace(/Retry-After: \d+/, 'Retry-After: n'));
  });
});

describe('framing', () => {
  it('reads a request split at every byte, the connection staying its own', async () => {
    readByNode = [];
    const connection = await RawConnection.open(t.url);
    const statuses = new Set<number>();
    // Each split from a client of its own, so the rate limit stays out of it.
    const request = () => Buffer.from(hit(pageview('/x'), { Origin: 'https://unknown.example' }));
    for (let at = 1, bytes = request(); at < bytes.length; at++, bytes = request()) {
      await connection.send(bytes.subarray(0, at));
      // A later turn of the server's event loop: the first part is read alone.
      await new Promise((resolve) => setTimeout(resolve, 1));
      await connection.send(bytes.subarray(at));
      statuses.add((await connection.answer())?.status ?? 0);
    }
    connection.close();
    expect([...statuses]).toEqual([403]);
    expect(readByNode).toEqual([]);
  });

  it('answers pipelined hits in the order sent, and stores each once', async () => {
    const connection = await RawConnection.open(t.url);
    const paths = Array.from({ length: 40 }, (_, i) => `/pipelined-${i}`);
    await connection.send(paths.map((path) => hit(pageview(path))).join(''));
    const statuses: number[] = [];
    for (const _ of paths) statuses.push((await connection.answer())?.status ?? 0);
    connection.close();
    expect(statuses).toEqual(paths.map(() => 202));
    const rows = await t.rows<{ path: string }>('hits', paths.length, "startsWith(path, '/pipelined-')");
    expect(rows.map((row) => row.path).sort()).toEqual([...paths].sort());
  });

  it('keeps answers in order when tracker hits and other requests share a connection, sent together or apart', async () => {
    const sequence = () => [hit(pageview('/mixed-a')), HEALTH, hit(pageview('/mixed-b')), rawRequest(['GET /api/nothing HTTP/1.1', 'Host: plumb.test'])];
    const together = await RawConnection.open(t.url);
    await together.send(sequence().join(''));
    const togetherStatuses = (await together.answers()).map((answer) => answer.status);
    together.close();
    const apart = await RawConnection.open(t.url);
    const apartStatuses: number[] = [];
    for (const request of sequence()) {
      await apart.send(request);
      apartStatuses.push((await apart.answer())?.status ?? 0);
    }
    apart.close();
    expect(togetherStatuses).toEqual([202, 200, 202, 404]);
    expect(apartStatuses).toEqual([202, 200, 202, 404]);
  });

  /** A tracker request's bytes from a client of its own, with `lines` after its Host. */
  const tracker = (lines: string[], body = '') => rawRequest(['POST /ingest HTTP/1.1', 'Host: plumb.test', `X-Forwarded-For: ${nextIp()}`, 'Origin: https://example.com', ...lines], body);
  const client = () => `X-Forwarded-For: ${nextIp()}`;
  it.each<[string, () => string]>([
    ['Content-Length and Transfer-Encoding together', () => tracker(['Content-Length: 4', 'Transfer-Encoding: chunked'], '0\r\n\r\n')],
    ['a chunked body', () => tracker(['Content-Type: text/plain', 'Transfer-Encoding: chunked'], '9\r\n{"url":1}\r\n0\r\n\r\n')],
    ['two Content-Length headers that differ', () => tracker(['Content-Length: 2', 'Content-Length: 9'], '{}')],
    ['two equal Content-Length headers', () => tracker(['Content-Length: 2', 'Content-Length: 2'], '{}')],
    ['a signed Content-Length', () => tracker(['Content-Length: +2'], '{}')],
    ['a Content-Length list', () => tracker(['Content-Length: 2, 2'], '{}')],
    ['a space before the colon', () => tracker(['Content-Length : 2'], '{}')],
    ['a folded header line', () => tracker(['Content-Length: 2', 'X-Folded: a', ' b'], '{}')],
    ['a bare line feed', () => `POST /ingest HTTP/1.1\r\nHost: plumb.test\n${client()}\r\nContent-Length: 2\r\n\r\n{}`],
    ['a bare carriage return in a value', () => tracker(['Content-Length: 2', 'X-Odd: a\rb'], '{}')],
    ['a control byte in a value', () => tracker(['Content-Length: 2', 'X-Odd: a\u0001b'], '{}')],
    ['no Content-Length', () => tracker(['Content-Type: text/plain'])],
    ['a body over the route’s limit', () => tracker(['Content-Type: text/plain', 'Content-Length: 20000'], 'x'.repeat(20_000))],
    ['a gzip body', () => tracker(['Content-Type: text/plain', 'Content-Encoding: gzip', 'Content-Length: 3'], 'abc')],
    ['Connection: close', () => tracker(['Content-Type: text/plain', 'Connection: close', 'Content-Length: 2'], '{}')],
    ['HTTP/1.0', () => `POST /ingest HTTP/1.0\r\nHost: plumb.test\r\n${client()}\r\nContent-Length: 2\r\n\r\n{}`],
    ['no Host', () => `POST /ingest HTTP/1.1\r\n${client()}\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\n{}`],
    ['an API token', () => tracker(['Content-Type: text/plain', 'Authorization: Bearer not-a-token', 'Content-Length: 2'], '{}')],
    ['a head longer than the direct path reads', () => tracker(['Content-Type: text/plain', `Cookie: c=${'x'.repeat(9000)}`, 'Content-Length: 2'], '{}')],
    ['a lowercase method', () => `post /ingest HTTP/1.1\r\nHost: plumb.test\r\nContent-Length: 2\r\n\r\n{}`],
    ['a preflight', () => rawRequest(['OPTIONS /ingest HTTP/1.1', 'Host: plumb.test', 'Origin: https://example.com', 'Access-Control-Request-Method: POST'])],
  ])('leaves %s to Node, which answers it and what follows as it always has', async (_case, request) => {
    const { direct, node } = await answersBothWays(request() + hit(pageview('/x'), { Origin: 'https://unknown.example' }));
    expect(direct).toEqual(node);
    expect(direct.length).toBeGreaterThan(0);
  });
});

describe('a client that half-closes', () => {
  // Node's server takes the end of what a client sends as the client gone, whatever it had sent.
  it.each([
    ['after a hit', () => hit(pageview('/x'), { Origin: 'https://unknown.example' })],
    ['in the middle of a head', () => 'POST /ingest HTTP/1.1\r\nHost: plumb.test\r\n'],
  ])('has its connection ended %s', async (_case, bytes) => {
    const connection = await RawConnection.open(t.url);
    await connection.send(bytes());
    connection.finish();
    expect(await connection.closesWithin(2000)).toBe(true);
  });
});

describe("Node's timeouts", () => {
  /**
   * How long a check waits for the close a shortened timeout (1 s) brings: the connections are
   * swept once a second, and a test node shares its process and the machine's two cores with
   * other suites, whose work can hold its event loop for seconds.
   */
  const CLOSE_WAIT_MS = 10_000;

  /** Runs `check` with one of the gateway server's timeouts shortened, then restores it. */
  async function withTimeout(setting: 'keepAliveTimeout' | 'headersTimeout', ms: number, check: () => Promise<void>) {
    const { server } = gatewayOf(t.node.broker);
    const before = server[setting];
    server[setting] = ms;
    try {
      await check();
    } finally {
      server[setting] = before;
    }
  }

  it('ends a connection idle past the keep-alive timeout', () =>
    withTimeout('keepAliveTimeout', 1000, async () => {
      const connection = await RawConnection.open(t.url);
      await connection.send(hit(pageview('/x'), { Origin: 'https://unknown.example' }));
      expect((await connection.answer())?.headers).toContainEqual(['keep-alive', 'timeout=1']);
      expect(await connection.closesWithin(CLOSE_WAIT_MS)).toBe(true);
    }));

  it('answers 408 to a head that does not arrive within the headers timeout, and closes', () =>
    withTimeout('headersTimeout', 1000, async () => {
      const connection = await RawConnection.open(t.url);
      await connection.send('POST /ingest HTTP/1.1\r\nHost: plumb.test\r\n');
      expect(await connection.closesWithin(CLOSE_WAIT_MS)).toBe(true);
      expect(connection.received.toString('latin1')).toBe('HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n');
    }));

  it('gives a body slower than the headers timeout to Node, which waits for it and answers', () =>
    withTimeout('headersTimeout', 1000, async () => {
      readByNode = [];
      const bytes = hit(pageview('/slow-body'));
      const connection = await RawConnection.open(t.url);
      await connection.send(bytes.slice(0, -5));
      await new Promise((resolve) => setTimeout(resolve, 2500));
      await connection.send(bytes.slice(-5));
      expect((await connection.answer())?.status).toBe(202);
      connection.close();
      expect(readByNode).toHaveLength(1);
    }));
});

describe('a stopping node', () => {
  it('ends the idle connections it reads itself, so its stop waits for none of them', async () => {
    const idle = await RawConnection.open(t.url);
    await idle.send(hit(pageview('/x'), { Origin: 'https://unknown.example' }));
    expect((await idle.answer())?.status).toBe(403);
    const partial = await RawConnection.open(t.url);
    await partial.send('POST /ingest HTTP/1.1\r\n');
    // Within jest's timeout, well under the minute a connection left open would hold the stop.
    await t.node.stop();
    expect(idle.closed).toBe(true);
    expect(await partial.closesWithin(1000)).toBe(true);
  });
});

describe('-tracker-http node', () => {
  it("has Node's reader read every request, tracker hits included", async () => {
    // After the node above stopped: chDB opens one data directory per process at a time.
    const nodeOnly = await startTestNode({ PLUMB_TRACKER_HTTP: 'node' });
    try {
      const read: IncomingMessage[] = [];
      gatewayOf(nodeOnly.node.broker).server.on('request', (req: IncomingMessage) => read.push(req));
      const connection = await RawConnection.open(nodeOnly.url);
      await connection.send(hit(pageview('/read-by-node')));
      expect((await connection.answer())?.status).toBe(202);
      connection.close();
      expect(read.map((req) => req.url)).toEqual(['/ingest']);
      await nodeOnly.rows('hits', 1, "path = '/read-by-node'");
    } finally {
      await nodeOnly.stop();
    }
  });
});
