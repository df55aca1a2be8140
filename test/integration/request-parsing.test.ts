// What the gateway makes of a malformed or encoded request before any action sees it: a path that
// is not valid percent-encoding, JSON nested without bound, and compressed bodies (RFC 9110
// Content-Encoding). Each is the client's error (4xx), never a 500.
import { deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MAX_JSON_DEPTH } from '../../lib/http/body.ts';
import { request } from '../support/instance.ts';
import { startTestNode, type TestNode } from '../support/node.ts';

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

let t: TestNode;

beforeAll(async () => {
  t = await startTestNode({ PLUMB_INGEST_RATE_PER_SECOND: '100000', PLUMB_INGEST_BURST: '100000', PLUMB_API_RATE_PER_SECOND: '100000', PLUMB_API_BURST: '100000' });
}, 60_000);

afterAll(() => t.stop());

function track(path: string, body: string | Buffer, headers: Record<string, string> = {}) {
  return request(`${t.url}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'text/plain', Origin: 'https://example.com', 'User-Agent': CHROME, ...headers },
    body: typeof body === "string" ? body : new Uint8Array(body),
  });
}

/** A JSON object whose `data` nests `levels` arrays deep. */
const nested = (levels: number, fields: Record<string, unknown>) => `${JSON.stringify(fields).slice(0, -1)},"data":${'['.repeat(levels)}${']'.repeat(levels)}}`;

describe('a path that is not valid percent-encoding', () => {
  it.each(['/api/sites/%ff', '/api/favicon/%', '/api/sites/%E0%A4%A'])('answers %s with 400 bad_request', async (path) => {
    const res = await request(`${t.url}${path}`);
    expect([res.status, res.body]).toEqual([400, { message: 'The request path is not valid percent-encoding', code: 'bad_request' }]);
  });
});

describe('deeply nested JSON', () => {
  it.each([
    ['/ingest', MAX_JSON_DEPTH],
    ['/ingest/event', 5000],
  ])('is refused on %s with 400 invalid_json, %i arrays deep', async (path, levels) => {
    const res = await track(path, nested(levels, { url: 'https://example.com/', name: 'signup' }));
    expect([res.status, res.body.code]).toEqual([400, 'invalid_json']);
    expect(res.body.message).toBe(`Request body nests objects and arrays more than ${MAX_JSON_DEPTH} levels deep`);
  });

  // A small body is judged once parsed, a large one (from 16 KiB) before it is parsed.
  it.each([5000, 20_000])('is refused on POST /api/login with 400 invalid_json, %i arrays deep', async (levels) => {
    const res = await request(`${t.url}/api/login`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: nested(levels, { email: 'a@example.com', password: 'x' }) });
    expect([res.status, res.body.code]).toEqual([400, 'invalid_json']);
    expect(res.body.message).toBe(`Request body nests objects and arrays more than ${MAX_JSON_DEPTH} levels deep`);
  });

  it('is read up to the limit, brackets inside strings not counted', async () => {
    const body = nested(MAX_JSON_DEPTH - 1, { url: 'https://example.com/', referrer: `https://example.org/${'['.repeat(100)}` });
    const res = await track('/ingest', body);
    // Parsed, then judged by the action's own rules: `data` is not a field it accepts.
    expect(res.status).not.toBe(500);
    expect(res.body.code).not.toBe('invalid_json');
  });
});

describe('Content-Encoding', () => {
  it('decodes a gzip body and stores the pageview', async () => {
    const body = gzipSync(JSON.stringify({ url: 'https://example.com/gzipped' }));
    const res = await track('/ingest', body, { 'Content-Encoding': 'gzip' });
    expect(res.status).toBe(202);
    expect(await t.rows('hits', 1, 'path = {p:String}', { p: '/gzipped' })).toHaveLength(1);
  });

  it('decodes a deflate body', async () => {
    const body = deflateSync(JSON.stringify({ url: 'https://example.com/deflated', name: 'signup' }));
    const res = await track('/ingest/event', body, { 'Content-Encoding': 'deflate' });
    expect(res.status).toBe(202);
  });

  it('decodes a gzip body on a routed API action too', async () => {
    const body = gzipSync(JSON.stringify({ email: 'nobody@example.com', password: 'wrong password' }));
    const res = await request(`${t.url}/api/login`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' }, body });
    expect(res.status).toBe(401);
  });

  it.each(['br', 'compress', 'gzip, br'])('refuses %s with 415 unsupported_media_type', async (encoding) => {
    const res = await track('/ingest', JSON.stringify({ url: 'https://example.com/' }), { 'Content-Encoding': encoding });
    expect([res.status, res.body.code]).toEqual([415, 'unsupported_media_type']);
  });

  it('accepts identity as no encoding', async () => {
    const res = await track('/ingest', JSON.stringify({ url: 'https://example.com/identity' }), { 'Content-Encoding': 'identity' });
    expect(res.status).toBe(202);
  });

  it('answers a gzip bomb with 413 once the decoded bytes pass the limit, without inflating it all', async () => {
    // 64 MiB of spaces compress to about 64 KiB: the first 15,000 bytes sent, under the tracker's
    // 16 KiB limit, would inflate to some 15 MiB.
    const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024, ' '), { level: 9 }).subarray(0, 15_000);
    const started = performance.now();
    const res = await track('/ingest', bomb, { 'Content-Encoding': 'gzip' });
    expect([res.status, res.body.code]).toEqual([413, 'payload_too_large']);
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it('answers a truncated gzip body with 400 bad_request', async () => {
    const body = gzipSync(JSON.stringify({ url: 'https://example.com/truncated' }));
    const res = await track('/ingest', body.subarray(0, body.length - 10), { 'Content-Encoding': 'gzip' });
    expect([res.status, res.body.code]).toEqual([400, 'bad_request']);
  });
});
