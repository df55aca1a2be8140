// Every field of server ingest and AI-fetch forwarding checked for its format through a real node:
// a malformed value is refused with 400 validation_failed naming every bad field at once, nothing
// of the request is stored, and well-formed values of every kind are still accepted.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { request } from '../support/instance.ts';
import { startTestNode, type TestNode } from '../support/node.ts';

const FIREFOX_LINUX = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';
const GPTBOT = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)';

let t: TestNode;
let ingestToken: string;
let aiToken: string;

interface FieldIssue {
  field: string;
  message: string;
}

const minutesFromNow = (minutes: number) => new Date(Date.now() + minutes * 60_000).toISOString();

function post(path: string, body: unknown, token: string) {
  return request(`${t.url}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` }, body: JSON.stringify(body) });
}

const pageview = (path: string, extra: Record<string, unknown> = {}) => ({
  url: `https://example.com${path}`,
  timestamp: minutesFromNow(0),
  visitor_ip: '193.0.6.139',
  user_agent: FIREFOX_LINUX,
  ...extra,
});

/** The fields a 400 names, in the order given. */
const fieldsOf = (body: Record<string, unknown>) => (body.fields as FieldIssue[]).map((f) => f.field);
const messageOf = (body: Record<string, unknown>, field: string) => (body.fields as FieldIssue[]).find((f) => f.field === field)?.message;
/** The fields a 400 names with their messages (the gateway may add the validator's rule type). */
const issuesOf = (body: Record<string, unknown>) => (body.fields as FieldIssue[]).map(({ field, message }) => ({ field, message }));

/**
 * Sends one valid row of `table` and waits until it is stored. Ingest stores in the order it
 * accepts, so once this marker is visible, anything accepted before it would be too: an absence
 * checked after this cannot pass merely because the writer is slow.
 */
async function storedThrough(table: 'hits' | 'events' | 'ai_fetches', marker: string) {
  const res =
    table === 'ai_fetches'
      ? await post(`/api/sites/${t.site.id}/ingest/ai-fetch`, { path: marker, status_code: 200, user_agent: GPTBOT }, aiToken)
      : await post(`/api/ingest/server/${table === 'hits' ? 'pageview' : 'event'}`, { ...pageview(marker), name: 'Marker' }, ingestToken);
  expect(res.status).toBe(202);
  await t.rows(table, 1, 'path = {marker:String}', { marker });
}

beforeAll(async () => {
  t = await startTestNode({ PLUMB_INGEST_RATE_PER_SECOND: '100000', PLUMB_INGEST_BURST: '100000' });
  ingestToken = await t.token(['ingest:write']);
  aiToken = await t.token(['ai-fetch:write']);
});

afterAll(() => t.stop());

describe('POST /api/ingest/server/pageview', () => {
  it('refuses visitor_ip 999.1.1.1 with a 400 naming visitor_ip, and stores nothing', async () => {
    const res = await post('/api/ingest/server/pageview', pageview('/fields-bad-ip', { visitor_ip: '999.1.1.1' }), ingestToken);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_failed');
    expect(issuesOf(res.body)).toEqual([{ field: 'visitor_ip', message: 'visitor_ip must be an IPv4 or IPv6 address' }]);
    await storedThrough('hits', '/after-fields-bad-ip');
    expect(await t.rowsNow('hits', "path = '/fields-bad-ip'")).toEqual([]);
  });

  it('names every bad field of one request at once', async () => {
    const res = await post(
      '/api/ingest/server/pageview',
      {
        url: 'https://exa\tmple.com/fields-all-bad',
        timestamp: '2026-02-30T10:00:00Z',
        visitor_ip: '999.1.1.1',
        user_agent: 'Mozilla\u0000',
        referrer: 'not a url',
        session_id: 'a\u0007b',
        width: -1,
      },
      ingestToken,
    );
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_failed');
    expect(fieldsOf(res.body)).toEqual(['url', 'timestamp', 'visitor_ip', 'user_agent', 'referrer', 'session_id', 'width']);
    expect(messageOf(res.body, 'url')).toBe('url must be an absolute http(s) URL');
    expect(messageOf(res.body, 'timestamp')).toBe('timestamp must be an RFC 3339 date-time with an offset, e.g. 2026-11-21T10:00:00Z');
    expect(messageOf(res.body, 'user_agent')).toBe('user_agent must not contain control characters');
    expect(messageOf(res.body, 'referrer')).toBe('referrer must be empty or an absolute URL');
    expect(messageOf(res.body, 'session_id')).toBe('session_id must not contain control characters');
  });

  it.each([
    ['visitor_ip', '1.2.3'],
    ['visitor_ip', '2001:db8::g'],
    ['visitor_ip', ' 193.0.6.139'],
    ['visitor_ip', 'localhost'],
    ['visitor_ip', ''],
    ['url', 'https:example.com/fields-no-slashes'],
    ['url', 'https://example.com/fields-new\nline'],
    ['url', 'ftp://example.com/fields-ftp'],
    ['url', '/fields-relative'],
    ['timestamp', '2026-11-21T24:00:00Z'],
    ['timestamp', '2025-02-29T10:00:00Z'],
    ['timestamp', '2026-13-01T10:00:00Z'],
    ['timestamp', '2026-11-21T10:00:00'],
    ['timestamp', '2026-11-21 10:00:00Z'],
    ['timestamp', '2026-11-21T10:00:00+24:00'],
    ['timestamp', '1999-12-31T23:59:59Z'],
    ['timestamp', 'in 10 minutes'],
    ['referrer', 'https://exa\nmple.com/'],
    ['referrer', 'google.com'],
    ['user_agent', ''],
    ['user_agent', 'Mozilla/5.0\r\nX-Injected: 1'],
    ['session_id', ''],
    ['session_id', 's'.repeat(129)],
    ['width', 1.5],
    ['width', 100_001],
    ['width', 'wide'],
  ])('refuses %s %j, naming only that field', async (field, value) => {
    const res = await post('/api/ingest/server/pageview', pageview('/fields-one-bad', { [field]: value }), ingestToken);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_failed');
    expect(fieldsOf(res.body)).toEqual([field]);
  });

  it('refuses a timestamp more than 5 minutes ahead or before 2000, saying which', async () => {
    const ahead = await post('/api/ingest/server/pageview', pageview('/fields-one-bad', { timestamp: minutesFromNow(10) }), ingestToken);
    expect(issuesOf(ahead.body)).toEqual([{ field: 'timestamp', message: 'timestamp is more than 5 minutes in the future' }]);
    const old = await post('/api/ingest/server/pageview', pageview('/fields-one-bad', { timestamp: '1999-12-31T23:00:00-02:00' }), ingestToken);
    expect(old.status).toBe(202);
    const older = await post('/api/ingest/server/pageview', pageview('/fields-one-bad', { timestamp: '2000-01-01T00:30:00+01:00' }), ingestToken);
    expect(issuesOf(older.body)).toEqual([{ field: 'timestamp', message: 'timestamp is before 2000-01-01' }]);
  });

  it.each([
    ['an IPv6 visitor_ip', { visitor_ip: '2001:db8::1' }],
    ['an IPv4-mapped IPv6 visitor_ip', { visitor_ip: '::ffff:193.0.6.139' }],
    ['a timestamp with an offset and nanoseconds', { timestamp: '2025-06-01T12:00:00.123456789+02:00' }],
    ['a lower-case t and z', { timestamp: '2024-02-29t10:00:00z' }],
    ['an empty referrer', { referrer: '' }],
    ['an app referrer', { referrer: 'android-app://com.google.android.gm/' }],
    ['a url with a port, query and fragment', { url: 'https://example.com:8443/fields-good?q=1#top' }],
    ['a width of 0', { width: 0 }],
    ['a session_id of 128 characters', { session_id: 's'.repeat(128) }],
  ])('accepts %s', async (_name, extra) => {
    const res = await post('/api/ingest/server/pageview', pageview('/fields-good', extra), ingestToken);
    expect([res.status, res.body]).toEqual([202, { status: 'accepted' }]);
  });

  it('stored the well-formed requests and none of the malformed ones', async () => {
    // The 9 accepted above plus the one from 1999 that is in fact 2000-01-01T01:00Z.
    await t.rows('hits', 10, "path IN ('/fields-good', '/fields-one-bad')");
    expect(await t.rowsNow('hits', "path LIKE '/fields-%' AND path NOT IN ('/fields-good', '/fields-one-bad')")).toEqual([]);
    expect(await t.rowsNow('hits', "path = '/fields-one-bad' AND ts != '2000-01-01 01:00:00.000'")).toEqual([]);
  });
});

describe('POST /api/ingest/server/event', () => {
  it('names every bad event name and property at once', async () => {
    const longKey = 'k'.repeat(65);
    const properties = { plan: 'pro', 'bad\nkey': 'x', [longKey]: 'x', nested: { a: 1 }, long: 'v'.repeat(257), nul: 'a\u0000b', list: [1] };
    const res = await post('/api/ingest/server/event', { ...pageview('/fields-event'), visitor_ip: '999.1.1.1', name: '$pageview', properties }, ingestToken);
    expect(res.status).toBe(400);
    expect(fieldsOf(res.body)).toEqual([
      'visitor_ip',
      'name',
      'properties.bad\nkey',
      `properties.${longKey}`,
      'properties.nested',
      'properties.long',
      'properties.nul',
      'properties.list',
    ]);
    expect(messageOf(res.body, 'name')).toBe('name must not start with $ (names starting with $ are reserved)');
    expect(messageOf(res.body, 'properties.nested')).toBe(
      'properties.nested must be a string of at most 256 characters without control characters, a number or a boolean',
    );
  });

  it.each([
    ['a blank name', { name: '   ' }, 'name', 'name must not be blank'],
    ['a name with a control character', { name: 'Sign\u0000up' }, 'name', 'name must not contain control characters'],
    ['$engagement, which is the tracker’s own', { name: '$engagement' }, 'name', 'name must not start with $ (names starting with $ are reserved)'],
    [
      '31 properties',
      { properties: Object.fromEntries(Array.from({ length: 31 }, (_, i) => [`p${i}`, i])) },
      'properties',
      'properties may hold at most 30 properties, not 31',
    ],
  ])('refuses %s', async (_name, extra, field, message) => {
    const res = await post('/api/ingest/server/event', { ...pageview('/fields-event'), name: 'Signup', ...extra }, ingestToken);
    expect(res.status).toBe(400);
    expect(issuesOf(res.body)).toEqual([{ field, message }]);
  });

  it('accepts 30 properties, and values with tabs and line breaks', async () => {
    const properties = { ...Object.fromEntries(Array.from({ length: 29 }, (_, i) => [`p${i}`, i % 2 === 0])), note: 'line one\nline\ttwo' };
    const res = await post('/api/ingest/server/event', { ...pageview('/fields-event-good'), name: 'Feedback', properties }, ingestToken);
    expect(res.status).toBe(202);
    const [event] = await t.rows<{ props: Record<string, string> }>('events', 1, "path = '/fields-event-good'");
    expect(Object.keys(event.props)).toHaveLength(30);
    expect(event.props.note).toBe('line one\nline\ttwo');
  });

  it('stored none of the refused events', async () => {
    await storedThrough('events', '/after-fields-event');
    expect(await t.rowsNow('events', "path = '/fields-event'")).toEqual([]);
  });
});

describe('POST /api/ingest/server/batch', () => {
  it('reports every bad field of each rejected item and stores the good items', async () => {
    const res = await post(
      '/api/ingest/server/batch',
      {
        items: [
          { type: 'pageview', ...pageview('/fields-batch-good') },
          { type: 'pageview', ...pageview('/fields-batch-bad', { visitor_ip: '999.1.1.1', timestamp: '2026-02-30T10:00:00Z' }) },
          { type: 'event', ...pageview('/fields-batch-bad', { session_id: '', referrer: 'nowhere' }) },
          { type: 'page', ...pageview('/fields-batch-bad') },
        ],
      },
      ingestToken,
    );
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ accepted: 1, filtered: 0, rejected: 3 });
    const results = res.body.results as { index: number; status: string; code?: string; fields?: FieldIssue[] }[];
    expect(results.map((r) => [r.index, r.status, r.code, r.fields?.map((f) => f.field)])).toEqual([
      [0, 'accepted', undefined, undefined],
      [1, 'rejected', 'validation_failed', ['timestamp', 'visitor_ip']],
      [2, 'rejected', 'validation_failed', ['name', 'referrer', 'session_id']],
      [3, 'rejected', 'validation_failed', ['type']],
    ]);
    expect(results[2].fields?.find((f) => f.field === 'name')?.message).toBe('name is required when type is event');
    await storedThrough('hits', '/after-fields-batch');
    await storedThrough('events', '/after-fields-batch');
    expect(await t.rowsNow('hits', "path = '/fields-batch-good'")).toHaveLength(1);
    expect(await t.rowsNow('hits', "path = '/fields-batch-bad'")).toEqual([]);
    expect(await t.rowsNow('events', "path = '/fields-batch-bad'")).toEqual([]);
  });
});

describe('POST /api/sites/:id/ingest/ai-fetch', () => {
  const fetchOf = (extra: Record<string, unknown> = {}) => ({ path: '/fields-docs', status_code: 200, user_agent: GPTBOT, ...extra });
  const send = (body: unknown) => post(`/api/sites/${t.site.id}/ingest/ai-fetch`, body, aiToken);

  it('names every bad field of a fetch at once', async () => {
    const res = await send({ path: 'docs/guide', status_code: 99, user_agent: FIREFOX_LINUX, timestamp: '2026-02-30T10:00:00Z', bytes: -1, content_type: 'text/html\n' });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_failed');
    expect(fieldsOf(res.body).sort()).toEqual(['bytes', 'content_type', 'path', 'status_code', 'timestamp', 'user_agent']);
    expect(messageOf(res.body, 'path')).toBe('path must be a path starting with / (without spaces or control characters)');
    expect(messageOf(res.body, 'user_agent')).toBe('user_agent is not a known AI agent');
  });

  it('names every bad field of each bad item in a batch, and stores the good ones', async () => {
    const res = await send({
      items: [
        fetchOf({ path: '/fields-batch-ok' }),
        fetchOf({ path: undefined }),
        fetchOf({ path: undefined, url: 'https://elsewhere.example.org/fields-secret' }),
        fetchOf({ path: '//elsewhere.example.org/fields-secret', status_code: 200.5 }),
      ],
    });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ accepted: 1, rejected: 3 });
    const results = res.body.results as { index: number; status: string; code?: string; fields?: FieldIssue[] }[];
    expect(results.map(({ index, status, code }) => ({ index, status, code }))).toEqual([
      { index: 0, status: 'accepted', code: undefined },
      { index: 1, status: 'rejected', code: 'validation_failed' },
      { index: 2, status: 'rejected', code: 'validation_failed' },
      { index: 3, status: 'rejected', code: 'validation_failed' },
    ]);
    expect(results.slice(1).map((r) => r.fields?.map(({ field, message }) => ({ field, message })))).toEqual([
      [{ field: 'path', message: 'path or url is required' }],
      [{ field: 'url', message: "url must be a page of the site's domain or one of its hostnames" }],
      [
        { field: 'path', message: 'path must be a path starting with / (without spaces or control characters)' },
        { field: 'status_code', message: expect.any(String) },
      ],
    ]);
    await t.rows('ai_fetches', 1, "path = '/fields-batch-ok'");
  });

  it('refuses a url on another site’s host, and accepts one on the site’s extra hostname', async () => {
    const other = await send(fetchOf({ path: undefined, url: `https://${t.otherSite.domain}/fields-secret` }));
    expect(other.body.fields).toEqual([{ field: 'url', message: "url must be a page of the site's domain or one of its hostnames" }]);
    const extra = await send(fetchOf({ path: undefined, url: 'https://shop.example.net/fields-shop' }));
    expect([extra.status, extra.body]).toEqual([202, { accepted: 1 }]);
    const [row] = await t.rows<{ path: string; url: string }>('ai_fetches', 1, "path = '/fields-shop'");
    expect(row.url).toBe('https://shop.example.net/fields-shop');
  });

  it('stored none of the refused fetches', async () => {
    await storedThrough('ai_fetches', '/after-fields-fetches');
    expect(await t.rowsNow('ai_fetches', "path IN ('/fields-docs', '/fields-secret', '/docs/guide')")).toEqual([]);
  });
});
