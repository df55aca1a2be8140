// What a 400 says: every bad field of a request at once, each as {field, message, type} with a
// plain sentence that starts with the field's name; enum errors name the allowed values and never
// repeat the caller's; nothing of a refused request is stored.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { as, type Person, person } from '../support/accounts.ts';
import { startTestNode, type TestNode } from '../support/node.ts';

let t: TestNode;
let owner: Person;

beforeAll(async () => {
  t = await startTestNode({ PLUMB_API_RATE_PER_SECOND: '100000', PLUMB_API_BURST: '100000' });
  owner = await person(t, 'owner');
}, 60_000);

afterAll(() => t.stop());

const db = () => t.node.runtime.metadata();
const count = async (table: string) => (await db().query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n;

interface Refusal {
  status: number;
  body: { message?: string; code?: string; fields?: { field: string; message: string; type?: string }[] };
}

/** The 400's body, after checking its shape: code, the fields, and a message made of their sentences. */
function refusal(res: Refusal) {
  expect(res.status).toBe(400);
  expect(res.body.code).toBe('validation_failed');
  const fields = res.body.fields ?? [];
  expect(res.body.message).toBe(fields.map((f) => f.message).join('; '));
  return fields;
}

describe('POST /api/sites', () => {
  it('names a malformed team id, a domain and a time zone in one 400, and creates nothing', async () => {
    const before = await count('sites');
    const res = await as(t, owner, 'POST', '/api/sites', { domain: 'https://shop.example.com/', team_id: 'not-a-team', timezone: 'Mars/Olympus' });
    expect(refusal(res)).toEqual([
      { field: 'domain', message: 'domain must be a domain name such as example.com (no scheme, port or path)', type: 'siteDomain' },
      { field: 'team_id', message: 'team_id must be a UUID', type: 'uuid' },
      { field: 'timezone', message: 'timezone must be an IANA time zone such as Europe/Berlin or UTC', type: 'timeZone' },
    ]);
    expect(await count('sites')).toBe(before);
  });

  it('names each bad extra hostname by its place in the list', async () => {
    const res = await as(t, owner, 'POST', '/api/sites', { domain: 'fine.example', team_id: t.team.id, hostnames: ['shop.fine.example', 'not a host', '10.0.0.1'] });
    expect(refusal(res).map((f) => [f.field, f.message])).toEqual([
      ['hostnames[1]', 'hostnames[1] must be a hostname such as shop.example.com (no scheme, port or path)'],
      ['hostnames[2]', 'hostnames[2] must be a hostname such as shop.example.com (no scheme, port or path)'],
    ]);
  });

  it('says a missing field is required', async () => {
    expect(refusal(await as(t, owner, 'POST', '/api/sites', { team_id: t.team.id }))).toEqual([{ field: 'domain', message: 'domain is required', type: 'required' }]);
  });
});

describe('POST /api/sites/:id/goals', () => {
  it('names every bad field, the allowed values of an enum and not the value sent, and stores no goal', async () => {
    const before = await count('goals');
    const res = await as(t, owner, 'POST', `/api/sites/${t.site.id}/goals`, { name: 'x'.repeat(121), type: 'pageview', revenue: { currency: 'EURO' }, colour: 'red' });
    const fields = refusal(res);
    expect(fields).toEqual([
      { field: 'name', message: 'name must be at most 120 characters', type: 'stringMax' },
      { field: 'type', message: 'type must be one of: event, path', type: 'enumValue' },
      { field: 'revenue.currency', message: 'revenue.currency must be exactly 3 characters', type: 'stringLength' },
      { field: 'colour', message: 'colour is not an accepted field', type: 'objectStrict' },
    ]);
    expect(JSON.stringify(res.body)).not.toContain('pageview');
    expect(await count('goals')).toBe(before);
  });

  it('names every broken rule across fields at once, once each field is well-formed', async () => {
    const crossed = await as(t, owner, 'POST', `/api/sites/${t.site.id}/goals`, { name: 'Signup', type: 'path', event_name: 'signup', revenue: { currency: 'XYZ' } });
    expect(refusal(crossed).map((f) => f.message)).toEqual([
      'event_name applies to event goals only',
      'path_pattern is required for path goals',
      'revenue.currency must be an ISO 4217 currency code such as EUR or USD',
      'revenue applies to event goals only',
    ]);
  });
});

describe('a date range', () => {
  it('GET /api/sites/:id/stats names a bad from and a bad to together', async () => {
    const res = await as(t, owner, 'GET', `/api/sites/${t.site.id}/stats?from=yesterday&to=2026-02-30`);
    expect(refusal(res)).toEqual([
      { field: 'from', message: 'from must be a date (YYYY-MM-DD) or an RFC 3339 date-time', type: 'dateOrDateTime' },
      { field: 'to', message: 'to must be a date (YYYY-MM-DD) or an RFC 3339 date-time', type: 'dateOrDateTime' },
    ]);
  });

  it('GET /api/sites/:id/stats names the range, the filters and the comparison in one 400', async () => {
    const res = await as(t, owner, 'GET', `/api/sites/${t.site.id}/stats?from=2026-03-10&to=2026-03-01&filter=colour:is:red&compare=custom`);
    expect(refusal(res).map((f) => f.field)).toEqual(['to', 'filter', 'compare_from', 'compare_to']);
  });

  it('GET /api/sites/:id/events/timeseries names the range and the missing halves of its filters', async () => {
    const res = await as(t, owner, 'GET', `/api/sites/${t.site.id}/events/timeseries?event_name=signup&from=soon&property_value=pro&dimension_key=device`);
    expect(refusal(res)).toEqual([
      { field: 'from', message: 'from must be a date (YYYY-MM-DD) or an RFC 3339 date-time', type: 'dateOrDateTime' },
      { field: 'property_key', message: 'property_key is required with property_value', type: 'required' },
      { field: 'dimension_value', message: 'dimension_value is required with dimension_key', type: 'required' },
    ]);
  });
});

describe('POST /api/sites/:id/webhooks', () => {
  it('names every bad field at once and stores no webhook', async () => {
    const before = await count('webhooks');
    const res = await as(t, owner, 'POST', `/api/sites/${t.site.id}/webhooks`, { url: 42, events: [], enabled: 'yes' });
    expect(refusal(res)).toEqual([
      { field: 'name', message: 'name is required', type: 'required' },
      { field: 'url', message: 'url must be a string', type: 'string' },
      { field: 'events', message: 'events must hold at least 1 item', type: 'arrayMin' },
      { field: 'enabled', message: 'enabled must be true or false', type: 'boolean' },
    ]);
    expect(await count('webhooks')).toBe(before);
  });
});

describe('rules a use case checks', () => {
  it('POST /api/sites/:id/share names a malformed expiry and a short password together', async () => {
    const before = await count('share_links');
    const res = await as(t, owner, 'POST', `/api/sites/${t.site.id}/share`, { expires_at: '2030-02-30T00:00:00Z', password: 'short' });
    expect(refusal(res)).toEqual([
      { field: 'expires_at', message: 'expires_at must be an RFC 3339 date-time, e.g. 2030-01-31T12:00:00Z', type: 'dateTime' },
      { field: 'password', message: 'password must be at least 10 characters', type: 'password' },
    ]);
    expect(await count('share_links')).toBe(before);
  });

  it('POST /api/user/api-clients names a site listed twice and an expiry in the past together', async () => {
    const sites = [{ site_id: t.site.id, role: 'viewer' }, { site_id: t.site.id, role: 'viewer' }];
    const res = await as(t, owner, 'POST', '/api/user/api-clients', { name: 'ci', scopes: ['stats:read'], sites, expires_at: 'yesterday' });
    expect(refusal(res).map((f) => [f.field, f.type])).toEqual([
      ['sites', 'arrayUnique'],
      ['expires_at', 'dateTime'],
    ]);
  });

  it('a malformed id in the path reads "id must be a UUID"', async () => {
    expect(refusal(await as(t, owner, 'GET', '/api/sites/not-a-uuid'))).toEqual([{ field: 'id', message: 'id must be a UUID', type: 'uuid' }]);
  });
});
