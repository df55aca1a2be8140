// The analytics store over ClickHouse's HTTP interface (@clickhouse/client), against the chDB-backed
// test server. The server runs in a child process: chDB binds one data directory per process, and
// this jest process may hold another one for the embedded store's tests.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { gzipSync } from 'node:zlib';
import { openAnalyticsStore } from '../../lib/stores/analytics/index.ts';
import { silentLog } from '../../lib/log.ts';
import { analyticsStoreContract } from '../support/analytics-contract.ts';

const root = new URL('../../', import.meta.url).pathname;
let server: ChildProcessWithoutNullStreams | undefined;
let url = '';
const dataDir = mkdtempSync(join(tmpdir(), 'plumb-clickhouse-http-'));

/** Starts the test server on a free port and resolves with the URL it prints first. */
async function startServer(): Promise<string> {
  const child = spawn(join(root, 'node_modules/.bin/node'), [join(root, 'test/support/clickhouse-test-server.ts'), '--port', '0', '--data-dir', dataDir], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  server = child;
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const lines = createInterface({ input: child.stdout });
  const first = new Promise<string>((resolve, reject) => {
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`test server exited with ${code}: ${stderr}`)));
    setTimeout(() => reject(new Error(`test server printed no URL within 20s: ${stderr}`)), 20_000).unref();
  });
  return first;
}

beforeAll(async () => {
  url = await startServer();
}, 30_000);

afterAll(async () => {
  if (server && server.exitCode === null) {
    const exited = once(server, 'exit');
    server.kill('SIGTERM');
    await exited;
  }
  rmSync(dataDir, { recursive: true, force: true });
}, 30_000);

analyticsStoreContract('ClickHouse over HTTP', () => openAnalyticsStore({ dataDir: '/nonexistent', clickhouseUrl: url, log: silentLog }));

describe('ClickHouse analytics store', () => {
  it('reports kind clickhouse', async () => {
    const store = await openAnalyticsStore({ dataDir: '/nonexistent', clickhouseUrl: url, log: silentLog });
    expect(store.kind).toBe('clickhouse');
    await store.close();
  });

  it('fails to open when nothing answers at the URL', async () => {
    await expect(openAnalyticsStore({ dataDir: '/nonexistent', clickhouseUrl: 'http://127.0.0.1:9/', log: silentLog })).rejects.toThrow(/did not answer/);
  });
});

describe('ClickHouse test server', () => {
  it('answers /ping with Ok.', async () => {
    const res = await fetch(`${url}/ping`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('Ok.\n');
  });

  it('runs a GET query with bound parameters and default_format', async () => {
    const res = await fetch(`${url}/?query=${encodeURIComponent('SELECT {s:String} AS s, {n:UInt64} AS n')}&param_s=${encodeURIComponent("a\\'b\\n")}&param_n=7&default_format=JSONEachRow`);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-clickhouse-format')).toBe('JSONEachRow');
    expect(await res.text()).toBe('{"s":"a\'b\\n","n":"7"}\n');
  });

  it('inserts a gzip-compressed body, keeps a dedup token, and selects the database', async () => {
    const post = (query: string, body: string | Uint8Array<ArrayBuffer>, headers: Record<string, string> = {}) =>
      fetch(`${url}/?${query}`, { method: 'POST', body, headers });
    expect((await post('', 'CREATE DATABASE IF NOT EXISTS server_check')).status).toBe(200);
    const ddl = 'CREATE TABLE server_check.t (id UInt32, s String) ENGINE = MergeTree ORDER BY id SETTINGS non_replicated_deduplication_window = 10';
    expect((await post('', ddl)).status).toBe(200);
    const rows = new Uint8Array(gzipSync('{"id":1,"s":"semi; colon"}\n{"id":2,"s":"two"}\n'));
    const insert = `query=${encodeURIComponent('INSERT INTO server_check.t FORMAT JSONEachRow')}&insert_deduplication_token=batch-1`;
    expect((await post(insert, rows, { 'Content-Encoding': 'gzip' })).status).toBe(200);
    expect((await post(insert, rows, { 'Content-Encoding': 'gzip' })).status).toBe(200);
    const res = await post('database=server_check&default_format=JSONEachRow', 'SELECT id, s FROM t ORDER BY id');
    expect(await res.text()).toBe('{"id":1,"s":"semi; colon"}\n{"id":2,"s":"two"}\n');
  });

  it('refuses a body in an encoding it cannot read', async () => {
    const res = await fetch(`${url}/?query=${encodeURIComponent('INSERT INTO server_check.t FORMAT JSONEachRow')}`, {
      method: 'POST',
      body: 'x',
      headers: { 'Content-Encoding': 'zstd' },
    });
    expect(res.status).toBe(500);
    expect(res.headers.get('x-clickhouse-exception-code')).toBe('36');
    expect(await res.text()).toBe('Code: 36. DB::Exception: Unknown Content-Encoding of HTTP request: zstd. (BAD_ARGUMENTS)\n');
  });

  it('answers errors with HTTP 500, the exception text and X-ClickHouse-Exception-Code', async () => {
    const res = await fetch(url, { method: 'POST', body: 'SELECT * FROM no_such_db.no_such_table' });
    expect(res.status).toBe(500);
    expect(res.headers.get('x-clickhouse-exception-code')).toBe('81');
    expect(await res.text()).toMatch(/^Code: 81\. DB::Exception: .*no_such_db.*\(UNKNOWN_DATABASE\)/);
  });
});
