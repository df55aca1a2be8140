// `plumb serve` as an operator runs it: start on a fresh data dir with a short start-up log, serve
// the dashboard and tracker (to HEAD too), restart without losing anything, stop cleanly on a
// signal, refuse bad settings.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { COMPILE_CACHE_DIR } from '../../lib/process-settings.ts';
import { type Instance, request, runPlumb, startInstance, tempDataDir, tempDataDirWithPglite, waitFor } from '../support/instance.ts';

describe('plumb serve on a fresh data dir', () => {
  let instance: Instance;

  // How fast it gets ready is measured by `npm run bench -- startup`, not here.
  beforeAll(async () => {
    // Truly empty, as an operator's is: the other suites start on a copied PGlite database.
    instance = await startInstance({ dataDir: tempDataDir(), env: { PLUMB_LOG_LEVEL: 'debug' } });
  });

  afterAll(() => instance.destroy());

  it('is healthy and ready, and says it leads', async () => {
    expect((await request(`${instance.url}/healthz`)).body).toEqual({ status: 'ok' });
    expect((await request(`${instance.url}/readyz`)).body).toEqual({ status: 'ready', leader: true });
  });

  it('logs each request once at debug level with its request id, status and duration', async () => {
    await request(`${instance.url}/api/status`, { headers: { 'X-Request-ID': 'trace-me-42' } });
    const logged = () => instance.output().split('\n').filter((line) => line.includes('"reqId":"trace-me-42"'));
    await waitFor(async () => logged().length > 0, 2000, () => `no request line in:\n${instance.output()}`);
    await new Promise((r) => setTimeout(r, 100));
    const lines = logged();
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0])).toMatchObject({ msg: 'request', method: 'GET', url: '/api/status', status: 200 });
  });

  it('runs under the -heap-mb ceiling with gc() exposed, in the very process it was started as', () => {
    // The process re-executes itself with the heap flags: same PID, new command line.
    const commandLine = readFileSync(`/proc/${instance.child.pid}/cmdline`, 'utf8').split('\0');
    expect(commandLine).toEqual(expect.arrayContaining(['--max-old-space-size=256', '--max-semi-space-size=8', '--expose-gc', 'serve']));
  });

  it('runs with one malloc arena, one arena of the engine’s allocator and its TypeScript from the compile cache, which holds the node’s modules once it is up', () => {
    const environment = readFileSync(`/proc/${instance.child.pid}/environ`, 'utf8').split('\0');
    expect(environment).toEqual(expect.arrayContaining(['MALLOC_ARENA_MAX=1', 'MALLOC_TRIM_THRESHOLD_=131072', 'MALLOC_MMAP_THRESHOLD_=131072', 'JE_MALLOC_CONF=percpu_arena:disabled,narenas:1', `NODE_COMPILE_CACHE=${COMPILE_CACHE_DIR}`]));
    expect(readdirSync(COMPILE_CACHE_DIR, { recursive: true }).length).toBeGreaterThan(100);
  });

  it('reports its version at /api/status', async () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    expect((await request(`${instance.url}/api/status`)).body).toEqual({ needs_setup: true, version: pkg.version, ready: true, tracker_script_path: '/plumb.js', mail_configured: false });
  });

  it('generates a JWT secret of at least 32 bytes in the data dir', () => {
    expect(readFileSync(join(instance.dataDir, 'jwt-secret'), 'utf8').length).toBeGreaterThanOrEqual(32);
  });

  it('serves the dashboard shell for dashboard URLs', async () => {
    for (const path of ['/', '/login', '/sites/abc']) {
      const res = await request(`${instance.url}${path}`, { headers: { accept: 'text/html' } });
      expect({ path, status: res.status, type: res.headers.get('content-type') }).toEqual({ path, status: 200, type: 'text/html; charset=utf-8' });
      expect(res.text).toContain('<div id="root"></div>');
    }
  });

  it('serves built dashboard assets with long caching and only from its own origin', async () => {
    const shell = await request(`${instance.url}/`, { headers: { accept: 'text/html' } });
    const scripts = [...shell.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    expect(scripts.length).toBeGreaterThan(0);
    for (const src of scripts) expect(src.startsWith('/')).toBe(true);
    const js = scripts.find((s) => s.endsWith('.js'))!;
    const asset = await request(`${instance.url}${js}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
  });

  it('answers a missing asset with a JSON 404, not the shell', async () => {
    const res = await request(`${instance.url}/assets/missing.js`, { headers: { accept: 'text/html' } });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('not_found');
  });

  it('serves the tracking script with caching headers, ETag and 304', async () => {
    const res = await request(`${instance.url}/plumb.js`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(res.headers.get('cache-control')).toContain('max-age=');
    const etag = res.headers.get('etag')!;
    expect(etag).toMatch(/^".+"$/);
    expect((await fetch(`${instance.url}/plumb.js`, { headers: { 'If-None-Match': etag } })).status).toBe(304);
  });

  it('refuses a second process on the same data dir, leaving the first untouched', async () => {
    const second = await runPlumb(['serve', '-port', '0'], { PLUMB_DATA_DIR: instance.dataDir });
    expect(second.code).toBe(2);
    expect(second.stderr).toContain(`PLUMB_DATA_DIR: ${instance.dataDir} is in use by another Plumb process (pid ${instance.child.pid})`);
    expect((await request(`${instance.url}/readyz`)).status).toBe(200);
  });

  it('answers HEAD like GET on the tracker, the dashboard, its shell and the health checks, without a body', async () => {
    const shell = await request(`${instance.url}/`, { headers: { accept: 'text/html' } });
    const asset = [...shell.text.matchAll(/src="([^"]+\.js)"/g)].map((m) => m[1])[0];
    const paths = ['/plumb.js', '/plumb-vitals.js', '/', '/login', asset, '/healthz', '/readyz', '/api/status', '/api/docs/v1/openapi.json'];
    const same = (res: { headers: Headers }) => ['content-type', 'content-length', 'cache-control', 'etag'].map((name) => res.headers.get(name));
    for (const path of paths) {
      const init = { headers: { accept: 'text/html' } };
      const get = await request(`${instance.url}${path}`, init);
      const head = await request(`${instance.url}${path}`, { ...init, method: 'HEAD' });
      expect({ path, status: head.status, headers: same(head), body: head.text }).toEqual({ path, status: get.status, headers: same(get), body: '' });
    }
  });

  it("logs Moleculer's banner and per-service lines at debug", () => {
    const debugLines = instance
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { level: number; msg: string });
    const moleculer = debugLines.filter((line) => /^Moleculer v|ServiceBroker with \d+ service|^Service '\w+' started/.test(line.msg));
    expect(moleculer.length).toBeGreaterThan(2);
    expect(new Set(moleculer.map((line) => line.level))).toEqual(new Set([20]));
  });

  it('publishes an OpenAPI document naming every route the node serves', async () => {
    const res = await request(`${instance.url}/api/docs/v1/openapi.json`);
    const paths = Object.keys(res.body.paths as object);
    for (const path of ['/healthz', '/readyz', '/api/status', '/api/docs/v1/openapi.json', '/plumb.js']) expect(paths).toContain(path);
  });
});

describe('the start-up log at info', () => {
  let instance: Instance;

  beforeAll(async () => {
    instance = await startInstance({ env: { PLUMB_LOG_LEVEL: 'info' }, timeoutMs: 60_000 });
  }, 90_000);

  afterAll(() => instance.destroy());

  /** The JSON lines written up to and including the ready line. */
  const startUp = () => {
    const lines = instance
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { level: number; msg: string; mod?: string });
    return lines.slice(0, lines.findIndex((line) => / ready at /.test(line.msg)) + 1);
  };

  it('says in a few lines what listens where, the stores, the version and the leader', () => {
    const info = startUp().filter((line) => line.level === 30);
    expect(info.length).toBeGreaterThanOrEqual(4);
    expect(info.length).toBeLessThanOrEqual(6);
    const text = info.map((line) => line.msg).join('\n');
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    expect(text).toContain(`listening on http://127.0.0.1:${instance.port}`);
    expect(text).toMatch(/metadata store: PGlite opened/);
    expect(text).toMatch(/analytics store open \(chDB\)/);
    expect(info.at(-1)!.msg).toMatch(new RegExp(`^Plumb ${pkg.version.replace(/\./g, '\\.')} ready at \\S+ \\(node \\S+, leader\\)$`));
    expect(info.at(-1)).toMatchObject({ dataDir: instance.dataDir, leader: true, version: pkg.version });
  });

  it("shows nothing of Moleculer's banner or its per-service lines", () => {
    expect(startUp().filter((line) => line.mod !== undefined)).toEqual([]);
    expect(instance.output()).not.toMatch(/Moleculer v|ServiceBroker|is registered|Service '\w+' started|API Gateway/);
  });
});

describe('restart on an existing data dir', () => {
  it('keeps the JWT secret and the stores, and applies no migration twice', async () => {
    const dataDir = await tempDataDirWithPglite();
    const first = await startInstance({ dataDir });
    const secret = readFileSync(join(dataDir, 'jwt-secret'), 'utf8');
    expect((await first.stop()).code).toBe(0);
    // Released on stop, not merely taken over later because its holder is gone.
    expect(existsSync(join(dataDir, 'plumb.lock'))).toBe(false);
    const second = await startInstance({ dataDir });
    expect(readFileSync(join(dataDir, 'jwt-secret'), 'utf8')).toBe(secret);
    expect((await request(`${second.url}/readyz`)).status).toBe(200);
    expect(second.output()).not.toMatch(/"msg":"applied (metadata|analytics) migration/);
    await second.destroy();
  });
});

describe('graceful shutdown', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)('exits 0 within 10 s on %s', async (signal) => {
    const instance = await startInstance();
    const { code, ms } = await instance.stop(signal);
    expect(code).toBe(0);
    expect(ms).toBeLessThan(10_000);
    expect(instance.output()).toContain('Plumb stopped');
    await instance.destroy();
  });

  it('finishes a request that is in flight when the signal arrives', async () => {
    const instance = await startInstance();
    // A slow upload keeps the request open across the signal; it must still be answered.
    const body = new ReadableStream({
      async start(controller) {
        controller.enqueue(new TextEncoder().encode('{"x":'));
        await new Promise((r) => setTimeout(r, 300));
        controller.enqueue(new TextEncoder().encode('1}'));
        controller.close();
      },
    });
    const pending = fetch(`${instance.url}/api/status`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body, duplex: 'half' } as RequestInit);
    await new Promise((r) => setTimeout(r, 100));
    const stopped = instance.stop('SIGTERM');
    const res = await pending;
    expect(res.status).toBe(404);
    expect((await stopped).code).toBe(0);
    await instance.destroy();
  });
});

describe('start-up refuses bad settings, naming them', () => {
  it.each([
    [['serve', '-port', 'eighty'], {}, '-port: must be an integer'],
    [['serve', '--no-such-flag=1'], {}, '-no-such-flag: unknown flag'],
    [['serve'], { PLUMB_LOG_LEVEL: 'chatty' }, 'PLUMB_LOG_LEVEL: must be one of'],
    [['serve'], { PLUMB_PLUGINS: 'teleport' }, 'PLUMB_PLUGINS: unknown plugin "teleport"'],
    [['serve'], { PLUMB_TRANSPORTER: 'nats://127.0.0.1:4222' }, 'cluster mode needs PLUMB_DATABASE_URL'],
    [['launch'], {}, 'launch: unknown command'],
  ])('plumb %j with %j', async (args, env, message) => {
    const result = await runPlumb(args, { PLUMB_DATA_DIR: tempDataDir(), ...env });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
  });

  it('warns when PLUMB_JWT_SECRET is shorter than 32 bytes', async () => {
    const instance = await startInstance({ env: { PLUMB_JWT_SECRET: 'too-short' } });
    expect(instance.output()).toContain('PLUMB_JWT_SECRET is shorter than 32 bytes');
    await instance.destroy();
  });
});

describe('plumb --help', () => {
  it('lists every setting with its default and exits 0', async () => {
    const result = await runPlumb(['--help']);
    expect(result.code).toBe(0);
    for (const text of ['-data-dir', 'PLUMB_DATA_DIR', 'default ./data', '-port', 'PLUMB_PORT, PORT', 'default 8080', '-auth-session-minutes', 'default 15']) {
      expect(result.stdout).toContain(text);
    }
  });
});
