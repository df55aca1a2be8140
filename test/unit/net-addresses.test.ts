// The guarded outbound client (lib/net/): which addresses it may reach, and how it talks to them:
// DNS once and pinned, no redirects followed, one deadline, a body cap, no proxy from the env.
import { once } from 'node:events';
import { createServer, get as httpGet, type IncomingMessage, type Server, type ServerResponse, setGlobalProxyFromEnv } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { checkAddress, isPublicAddress } from '../../lib/net/addresses.ts';
import { checkDestination, guardedRequest, OutboundError } from '../../lib/net/guarded-fetch.ts';

describe('checkAddress', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['169.254.169.254', 'linkLocal'],
    ['224.0.0.1', 'multicast'],
    ['192.0.2.1', 'reserved'],
    ['198.51.100.7', 'reserved'],
    ['203.0.113.9', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['240.0.0.1', 'reserved'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['255.255.255.255', 'broadcast'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'linkLocal'],
    ['fc00::1', 'uniqueLocal'],
    ['fd12:3456::1', 'uniqueLocal'],
    ['ff02::1', 'multicast'],
    ['2002:c000:201::1', '6to4'],
    ['2001:0:4136:e378::1', 'teredo'],
    ['2001:db8::1', 'reserved'],
    ['3fff::1', 'reserved'],
    ['64:ff9b::a00:1', 'rfc6052'],
    ['fec0::1', 'deprecatedSiteLocal'],
    ['100::1', 'discard'],
    ['192.0.0.1', 'reserved'],
    ['192.88.99.1', 'reserved'],
    ['192.175.48.1', 'as112'],
    ['::a00:1', 'reserved'],
    ['2001:2::1', 'benchmarking'],
    ['2001:20::1', 'orchid2'],
    ['64:ff9b:1::1', 'rfc6052'],
  ])('refuses %s (%s)', (address, range) => {
    expect(checkAddress(address)).toMatchObject({ range, public: false });
    expect(isPublicAddress(address)).toBe(false);
  });

  it('judges IPv4-mapped IPv6 by the IPv4 host it reaches, and connects to that', () => {
    expect(checkAddress('::ffff:127.0.0.1')).toEqual({ address: '127.0.0.1', family: 4, range: 'loopback', public: false });
    expect(checkAddress('::ffff:10.0.0.1')).toEqual({ address: '10.0.0.1', family: 4, range: 'private', public: false });
    expect(checkAddress('::ffff:8.8.8.8')).toEqual({ address: '8.8.8.8', family: 4, range: 'unicast', public: true });
  });

  it('lets ordinary public addresses through', () => {
    expect(checkAddress('93.184.215.14')).toEqual({ address: '93.184.215.14', family: 4, range: 'unicast', public: true });
    expect(checkAddress('2606:4700:4700::1111')).toEqual({ address: '2606:4700:4700::1111', family: 6, range: 'unicast', public: true });
    expect(checkAddress('[2606:4700:4700::1111]')).toEqual({ address: '2606:4700:4700::1111', family: 6, range: 'unicast', public: true });
  });

  it('does not take names or legacy numeric spellings for addresses', () => {
    expect(checkAddress('example.com')).toBeNull();
    expect(checkAddress('127.1')).toBeNull();
    expect(checkAddress('0x7f.0.0.1')).toBeNull();
    expect(checkAddress('2130706433')).toBeNull();
  });
});

describe('guardedRequest', () => {
  let server: Server;
  let port: number;
  const seen: { path: string; host: string }[] = [];

  const routes: Record<string, (req: IncomingMessage, res: ServerResponse) => void> = {
    '/ok': (_req, res) => res.end('hello'),
    '/redirect': (_req, res) => {
      res.writeHead(302, { Location: '/ok' });
      res.end();
    },
    '/silent': () => undefined,
    '/drip': (_req, res) => {
      res.writeHead(200);
      const timer = setInterval(() => res.write('x'), 20);
      res.on('close', () => clearInterval(timer));
    },
    '/declared-large': (_req, res) => {
      res.writeHead(200, { 'Content-Length': '5000' });
      res.end(Buffer.alloc(5000));
    },
    '/chunked-large': (_req, res) => {
      res.writeHead(200);
      for (let i = 0; i < 10; i++) res.write(Buffer.alloc(500));
      res.end();
    },
    '/echo': (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => res.end(JSON.stringify({ method: req.method, type: req.headers['content-type'], body: Buffer.concat(chunks).toString() })));
    },
  };

  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push({ path: req.url ?? '', host: req.headers.host ?? '' });
      (routes[req.url ?? ''] ?? ((_r: IncomingMessage, s: ServerResponse) => s.writeHead(404).end()))(req, res);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as { port: number }).port;
  });

  afterAll(async () => {
    server.closeAllConnections();
    server.close();
  });

  const failure = async (promise: Promise<unknown>) => {
    try {
      await promise;
    } catch (err) {
      expect(err).toBeInstanceOf(OutboundError);
      return { kind: (err as OutboundError).kind, message: (err as OutboundError).message };
    }
    throw new Error('expected the request to fail');
  };
  const local = (path: string) => new URL(`http://pinned.test:${port}${path}`);
  const toLocal = async () => ['127.0.0.1'];

  it.each(['127.0.0.1', '10.0.0.8', '172.20.1.1', '192.168.0.10', '100.100.0.1', '169.254.169.254', '224.0.0.251', '192.0.2.10', '0.0.0.0', '255.255.255.255', '::1', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1', '2002:7f00:1::1', '2001:db8::5'])(
    'refuses a name that resolves to %s',
    async (address) => {
      const result = await failure(guardedRequest(new URL('http://innocent.example/'), { timeoutMs: 1000, maxBytes: 100, resolver: async () => [address] }));
      expect(result.kind).toBe('blocked_address');
    },
  );

  it('refuses a name when any one of its addresses is refused', async () => {
    const result = await failure(guardedRequest(new URL('http://mixed.example/'), { timeoutMs: 1000, maxBytes: 100, resolver: async () => ['93.184.215.14', '10.0.0.1'] }));
    expect(result).toEqual({ kind: 'blocked_address', message: 'mixed.example resolves to a private address, which outbound requests may not reach' });
  });

  it('refuses IP literals of refused classes without asking DNS', async () => {
    let asked = 0;
    const resolver = async () => {
      asked++;
      return ['93.184.215.14'];
    };
    expect((await failure(guardedRequest(new URL(`http://127.0.0.1:${port}/ok`), { timeoutMs: 1000, maxBytes: 100, resolver }))).kind).toBe('blocked_address');
    expect((await failure(guardedRequest(new URL(`http://[::1]:${port}/ok`), { timeoutMs: 1000, maxBytes: 100, resolver }))).kind).toBe('blocked_address');
    expect((await failure(guardedRequest(new URL(`http://[::ffff:7f00:1]:${port}/ok`), { timeoutMs: 1000, maxBytes: 100, resolver }))).kind).toBe('blocked_address');
    expect(asked).toBe(0);
  });

  it('refuses other schemes and URLs with credentials', async () => {
    expect((await failure(guardedRequest(new URL('ftp://example.com/x'), { timeoutMs: 1000, maxBytes: 100 }))).kind).toBe('invalid_url');
    expect((await failure(guardedRequest(new URL('file:///etc/passwd'), { timeoutMs: 1000, maxBytes: 100 }))).kind).toBe('invalid_url');
    expect((await failure(guardedRequest(new URL('http://user:pw@example.com/'), { timeoutMs: 1000, maxBytes: 100 }))).kind).toBe('invalid_url');
  });

  it('reports a name that does not resolve as a DNS failure', async () => {
    const resolver = async () => {
      throw new Error('ENOTFOUND');
    };
    expect(await failure(guardedRequest(new URL('http://nowhere.example/'), { timeoutMs: 1000, maxBytes: 100, resolver }))).toEqual({
      kind: 'dns',
      message: 'Cannot resolve nowhere.example: ENOTFOUND',
    });
  });

  it('resolves once and connects to the checked address, sending the name as Host', async () => {
    let asked = 0;
    const resolver = async () => {
      asked++;
      return ['127.0.0.1'];
    };
    const res = await guardedRequest(local('/ok'), { timeoutMs: 2000, maxBytes: 100, allowPrivate: true, resolver });
    expect({ status: res.status, body: res.body.toString() }).toEqual({ status: 200, body: 'hello' });
    expect(asked).toBe(1);
    expect(seen.at(-1)).toEqual({ path: '/ok', host: `pinned.test:${port}` });
  });

  it('sends method, headers and body', async () => {
    const res = await guardedRequest(local('/echo'), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{"a":1}',
      timeoutMs: 2000,
      maxBytes: 1000,
      allowPrivate: true,
      resolver: toLocal,
    });
    expect(JSON.parse(res.body.toString())).toEqual({ method: 'POST', type: 'application/json', body: '{"a":1}' });
  });

  it('returns a redirect as it is, without following it', async () => {
    const before = seen.length;
    const res = await guardedRequest(local('/redirect'), { timeoutMs: 2000, maxBytes: 100, allowPrivate: true, resolver: toLocal });
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe('/ok');
    expect(seen.slice(before).map((s) => s.path)).toEqual(['/redirect']);
  });

  it('gives up at the deadline when the server never answers', async () => {
    const started = Date.now();
    expect((await failure(guardedRequest(local('/silent'), { timeoutMs: 200, maxBytes: 100, allowPrivate: true, resolver: toLocal }))).kind).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('counts the deadline over the whole answer, not per chunk: a trickling body times out too', async () => {
    expect((await failure(guardedRequest(local('/drip'), { timeoutMs: 300, maxBytes: 100_000, allowPrivate: true, resolver: toLocal }))).kind).toBe('timeout');
  });

  it('counts a slow DNS answer against the deadline', async () => {
    const slowResolver = () => new Promise<string[]>((resolve) => setTimeout(() => resolve(['127.0.0.1']), 1000));
    expect((await failure(guardedRequest(local('/ok'), { timeoutMs: 100, maxBytes: 100, allowPrivate: true, resolver: slowResolver }))).kind).toBe('timeout');
  });

  it('stops reading beyond maxBytes, whether the size is declared or not', async () => {
    expect((await failure(guardedRequest(local('/declared-large'), { timeoutMs: 2000, maxBytes: 1000, allowPrivate: true, resolver: toLocal }))).kind).toBe('too_large');
    expect((await failure(guardedRequest(local('/chunked-large'), { timeoutMs: 2000, maxBytes: 1000, allowPrivate: true, resolver: toLocal }))).kind).toBe('too_large');
    const exact = await guardedRequest(local('/chunked-large'), { timeoutMs: 2000, maxBytes: 5000, allowPrivate: true, resolver: toLocal });
    expect(exact.body.length).toBe(5000);
  });

  it('ignores proxy settings in the environment, which the global agents follow', async () => {
    const proxied: string[] = [];
    const proxy = createServer((req, res) => {
      proxied.push(req.url ?? '');
      res.end('via proxy');
    });
    proxy.listen(0, '127.0.0.1');
    await once(proxy, 'listening');
    const restore = setGlobalProxyFromEnv({ HTTP_PROXY: `http://127.0.0.1:${(proxy.address() as { port: number }).port}` });
    try {
      // The control: an ordinary request now goes through the proxy.
      const viaGlobal = await new Promise<string>((resolve, reject) => {
        httpGet(`http://pinned.test:${port}/ok`, (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => resolve(text));
        }).on('error', reject);
      });
      expect(viaGlobal).toBe('via proxy');
      const res = await guardedRequest(local('/ok'), { timeoutMs: 2000, maxBytes: 100, allowPrivate: true, resolver: toLocal });
      expect(res.body.toString()).toBe('hello');
      expect(proxied).toEqual([`http://pinned.test:${port}/ok`]);
    } finally {
      restore();
      proxy.closeAllConnections();
      proxy.close();
    }
  });

  it('reports a refused connection as a network failure', async () => {
    const closed = createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const closedPort = (closed.address() as { port: number }).port;
    closed.close();
    await once(closed, 'close');
    const result = await failure(guardedRequest(new URL(`http://gone.test:${closedPort}/`), { timeoutMs: 2000, maxBytes: 100, allowPrivate: true, resolver: toLocal }));
    expect(result.kind).toBe('network');
  });
});

describe('checkDestination', () => {
  const kindOf = async (promise: Promise<unknown>) => {
    try {
      await promise;
    } catch (err) {
      expect(err).toBeInstanceOf(OutboundError);
      return (err as OutboundError).kind;
    }
    return 'passed';
  };

  it('answers the address a request would connect to, without connecting', async () => {
    const resolver = async () => ['93.184.215.14'];
    expect(await checkDestination(new URL('https://hooks.example/x'), { timeoutMs: 1000, resolver })).toEqual({ address: '93.184.215.14', family: 4, range: 'unicast', public: true });
  });

  it('refuses what guardedRequest refuses: blocked addresses, bad URLs, unresolvable names, slow DNS', async () => {
    expect(await kindOf(checkDestination(new URL('https://inside.example/'), { timeoutMs: 1000, resolver: async () => ['10.0.0.1'] }))).toBe('blocked_address');
    expect(await kindOf(checkDestination(new URL('https://[::1]/'), { timeoutMs: 1000 }))).toBe('blocked_address');
    expect(await kindOf(checkDestination(new URL('https://u:p@hooks.example/'), { timeoutMs: 1000 }))).toBe('invalid_url');
    const missing = async () => {
      throw new Error('ENOTFOUND');
    };
    expect(await kindOf(checkDestination(new URL('https://nowhere.example/'), { timeoutMs: 1000, resolver: missing }))).toBe('dns');
    const slow = () => new Promise<string[]>((resolve) => setTimeout(() => resolve(['93.184.215.14']), 500));
    expect(await kindOf(checkDestination(new URL('https://slow.example/'), { timeoutMs: 50, resolver: slow }))).toBe('timeout');
  });

  it('lets loopback and private destinations through only when allowed', async () => {
    expect(await kindOf(checkDestination(new URL('http://127.0.0.1:8080/'), { timeoutMs: 1000, allowPrivate: true }))).toBe('passed');
  });
});
