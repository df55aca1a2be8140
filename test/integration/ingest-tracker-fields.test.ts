// The tracker routes' bodies checked through a real node: a hit's url must be a page of the site its
// Origin resolved (never another host's paths under the site), and every malformed field is named
// in one 400 validation_failed, with nothing stored.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { request } from '../support/instance.ts';
import { startTestNode, type TestNode } from '../support/node.ts';

const CHROME_WINDOWS = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const NOT_THE_SITES = "url must be a page of the site's domain or one of its hostnames";

let t: TestNode;
let statsToken: string;

interface FieldIssue {
  field: string;
  message: string;
}

function post(path: string, body: unknown, origin = 'https://example.com') {
  return request(`${t.url}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'text/plain', Origin: origin, 'User-Agent': CHROME_WINDOWS },
    body: JSON.stringify(body),
  });
}

const issuesOf = (body: Record<string, unknown>) => (body.fields as FieldIssue[]).map(({ field, message }) => ({ field, message }));
const fieldsOf = (body: Record<string, unknown>) => (body.fields as FieldIssue[]).map((f) => f.field);

async function breakdown(dimension: string): Promise<string[]> {
  const res = await request(`${t.url}/api/sites/${t.site.id}/stats/breakdown?dimension=${dimension}&limit=200`, { headers: { Authorization: `Bearer ${statsToken}` } });
  expect(res.status).toBe(200);
  return (res.body.rows as { value: string }[]).map((r) => r.value);
}

beforeAll(async () => {
  t = await startTestNode({ PLUMB_INGEST_RATE_PER_SECOND: '100000', PLUMB_INGEST_BURST: '100000' });
  statsToken = await t.token(['stats:read'], [{ siteId: t.site.id, role: 'viewer' }]);
});

afterAll(() => t.stop());

describe('POST /ingest: the url must be on the site', () => {
  it.each([
    ['a host nobody registered', 'https://elsewhere.example.org/secret'],
    ['another site’s domain', 'https://other.example/secret'],
    ['a subdomain the site did not add as a hostname', 'https://blog.example.com/secret'],
    ['an IP address', 'http://203.0.113.9/secret'],
  ])('refuses %s with 400 naming url, even from the site’s Origin', async (_name, url) => {
    const res = await post('/ingest', { url });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_failed');
    expect(issuesOf(res.body)).toEqual([{ field: 'url', message: NOT_THE_SITES }]);
  });

  it('accepts the site’s domain, its www. form and its extra hostname, from any of the site’s Origins', async () => {
    expect((await post('/ingest', { url: 'https://example.com/hosts-domain' })).status).toBe(202);
    expect((await post('/ingest', { url: 'https://www.example.com/hosts-www' }, 'https://shop.example.net')).status).toBe(202);
    expect((await post('/ingest', { url: 'https://shop.example.net/hosts-shop' })).status).toBe(202);
    const hits = await t.rows<{ path: string; hostname: string; site_id: string }>('hits', 3, "path LIKE '/hosts-%'");
    expect(hits.map((h) => [h.path, h.hostname, h.site_id])).toEqual([
      ['/hosts-domain', 'example.com', t.site.id],
      ['/hosts-www', 'example.com', t.site.id],
      ['/hosts-shop', 'shop.example.net', t.site.id],
    ]);
  });

  it('never lists another host’s paths or hostname in the site’s breakdowns', async () => {
    await t.rows('visits', 1, "has(pages, '/hosts-shop')");
    expect(await t.rowsNow('hits', "path = '/secret'")).toEqual([]);
    const pages = await breakdown('pages');
    expect(pages).toEqual(expect.arrayContaining(['/hosts-domain', '/hosts-www', '/hosts-shop']));
    expect(pages).not.toContain('/secret');
    expect((await breakdown('hostnames')).sort()).toEqual(['example.com', 'shop.example.net']);
  });
});

describe('POST /ingest/event and /ingest/web-vitals: the url must be on the site', () => {
  it('refuses an event or a web vital on another host, storing neither', async () => {
    const event = await post('/ingest/event', { url: 'https://elsewhere.example.org/secret-event', name: 'Signup' });
    expect([event.status, issuesOf(event.body)]).toEqual([400, [{ field: 'url', message: NOT_THE_SITES }]]);
    const vital = await post('/ingest/web-vitals', { url: 'https://elsewhere.example.org/secret-vital', metric: 'LCP', value: 900 });
    expect([vital.status, issuesOf(vital.body)]).toEqual([400, [{ field: 'url', message: NOT_THE_SITES }]]);
    expect((await post('/ingest/event', { url: 'https://shop.example.net/hosts-event', name: 'Signup' })).status).toBe(202);
    expect((await post('/ingest/web-vitals', { url: 'https://example.com/hosts-vital', metric: 'LCP', value: 900 })).status).toBe(202);
    await t.rows('events', 1, "path = '/hosts-event'");
    await t.rows('web_vitals', 1, "path = '/hosts-vital'");
    expect(await t.rowsNow('events', "path = '/secret-event'")).toEqual([]);
    expect(await t.rowsNow('web_vitals', "path = '/secret-vital'")).toEqual([]);
  });
});

describe('tracker fields', () => {
  it('names every bad field of a pageview at once', async () => {
    const res = await post('/ingest', { url: 'https://exa\tmple.com/fields', referrer: 'not a url', width: 'wide' });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_failed');
    expect(fieldsOf(res.body)).toEqual(['url', 'referrer', 'width']);
  });

  it.each([
    ['a url whose host hides a tab', { url: 'https://exa\tmple.com/fields-bad' }, 'url', 'url must be an absolute http(s) URL'],
    ['a url without //', { url: 'https:example.com/fields-bad' }, 'url', 'url must be an absolute http(s) URL'],
    ['a referrer that is not a URL', { url: 'https://example.com/fields-bad', referrer: 'google' }, 'referrer', 'referrer must be empty or an absolute URL'],
  ])('refuses a pageview with %s', async (_name, body, field, message) => {
    const res = await post('/ingest', body);
    expect([res.status, issuesOf(res.body)]).toEqual([400, [{ field, message }]]);
  });

  it.each([
    ['a blank name', { name: ' \t ' }, 'name', 'name must not be blank'],
    ['a name with a line break', { name: 'Sign\nup' }, 'name', 'name must not contain control characters'],
    ['a reserved name', { name: '$pageview' }, 'name', 'name must not start with $ (names starting with $ are reserved)'],
    ['$engagement without engagement_ms', { name: '$engagement' }, 'engagement_ms', 'engagement_ms is required with the $engagement event'],
    [
      'a property name with a control character',
      { name: 'Signup', props: { 'pl\u0000an': 'pro' } },
      'props.pl\u0000an',
      'props.pl\u0000an: property names must be 1 to 64 characters without control characters',
    ],
    [
      'an object as a property value',
      { name: 'Signup', props: { plan: { tier: 'pro' } } },
      'props.plan',
      'props.plan must be a string of at most 256 characters without control characters, a number or a boolean',
    ],
    ['31 properties', { name: 'Signup', props: Object.fromEntries(Array.from({ length: 31 }, (_, i) => [`p${i}`, 'x'])) }, 'props', 'props may hold at most 30 properties, not 31'],
  ])('refuses an event with %s', async (_name, extra, field, message) => {
    const res = await post('/ingest/event', { url: 'https://example.com/fields-bad', ...extra });
    expect([res.status, issuesOf(res.body)]).toEqual([400, [{ field, message }]]);
  });

  it('stored none of the refused hits', async () => {
    await post('/ingest/event', { url: 'https://example.com/fields-good', name: 'Outbound Link: Click', props: { url: 'https://elsewhere.example.org/' } });
    await t.rows('events', 1, "path = '/fields-good'");
    expect(await t.rowsNow('hits', "path IN ('/fields', '/fields-bad')")).toEqual([]);
    expect(await t.rowsNow('events', "path IN ('/fields', '/fields-bad')")).toEqual([]);
  });
});
