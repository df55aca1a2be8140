// Every list route pages the same way: `limit` (default 25, at most 200) and `offset`, refused with
// a 400 naming the field when out of range, and answered with total, limit, offset and has_more.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { as, type Person, person } from '../support/accounts.ts';
import { request } from '../support/instance.ts';
import { startTestNode, type TestNode } from '../support/node.ts';

type Parameter = { name: string; in: string; required?: boolean; schema: Record<string, unknown> };
type Operation = { parameters?: Parameter[]; responses: Record<string, { content?: Record<string, { schema?: { properties?: Record<string, unknown> } }> }> };

const LIMIT = { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 200, default: 25 } };
const OFFSET = { name: 'offset', in: 'query', required: false, schema: { type: 'integer', minimum: 0, maximum: 2_147_483_647, default: 0 } };

let t: TestNode;
let owner: Person;
/** Every GET operation of the running instance, as `GET /path/{id}` → its operation. */
let operations: [string, Operation][];

beforeAll(async () => {
  t = await startTestNode({ PLUMB_API_RATE_PER_SECOND: '100000', PLUMB_API_BURST: '100000' });
  owner = await person(t, 'owner');
  const doc = await request(`${t.url}/api/docs/v1/openapi.json`);
  const paths = doc.body.paths as Record<string, Record<string, Operation>>;
  operations = Object.entries(paths).flatMap(([path, methods]) => (methods.get ? [[path, methods.get] as [string, Operation]] : []));
});

afterAll(async () => {
  await t?.stop();
});

const answersAPage = (op: Operation) => {
  const properties = op.responses['200']?.content?.['application/json']?.schema?.properties ?? {};
  return ['total', 'limit', 'offset', 'has_more'].every((field) => field in properties);
};
const takesPaging = (op: Operation) => (op.parameters ?? []).some((p) => p.in === 'query' && (p.name === 'limit' || p.name === 'offset'));
const listRoutes = () => operations.filter(([, op]) => answersAPage(op)).map(([path]) => path);

describe('list routes', () => {
  it('are the routes that answer a page, and every route that takes limit or offset answers one', () => {
    expect(listRoutes()).toEqual(
      expect.arrayContaining(['/api/sites', '/api/admin/users', '/api/user/teams', '/api/user/teams/{id}/audit', '/api/sites/{id}/goals', '/api/sites/{id}/stats/breakdown']),
    );
    expect(listRoutes().length).toBeGreaterThanOrEqual(15);
    expect(operations.filter(([, op]) => takesPaging(op)).map(([path]) => path)).toEqual(listRoutes());
  });

  it('all take limit (default 25, at most 200) and offset (from 0) the same way', () => {
    for (const [path, op] of operations.filter(([, operation]) => answersAPage(operation))) {
      const paging = (op.parameters ?? []).filter((p) => p.name === 'limit' || p.name === 'offset');
      expect({ path, paging }).toEqual({ path, paging: [LIMIT, OFFSET] });
    }
  });

  // Access is checked before params, so the site and team are ones the caller can reach.
  it('all refuse a limit above 200 with 400 naming limit', async () => {
    for (const path of listRoutes()) {
      const url = `${path.replace('/sites/{id}', `/sites/${t.site.id}`).replace('/teams/{id}', `/teams/${t.team.id}`).replace(/\{[^}]+\}/g, () => randomUUID())}?limit=201`;
      const res = await as(t, owner, 'GET', url);
      expect({ path, status: res.status, code: res.body.code }).toEqual({ path, status: 400, code: 'validation_failed' });
      expect({ path, fields: res.body.fields }).toEqual({ path, fields: expect.arrayContaining([expect.objectContaining({ field: 'limit', message: 'limit must be at most 200' })]) });
    }
  });

  it('answer with the default page size when the request names none', async () => {
    const sites = await as(t, owner, 'GET', '/api/sites');
    expect(sites.body).toMatchObject({ limit: 25, offset: 0 });
    const members = await as(t, owner, 'GET', `/api/sites/${t.site.id}/members`);
    expect(members.body).toMatchObject({ limit: 25, offset: 0 });
    const breakdown = await as(t, owner, 'GET', `/api/sites/${t.site.id}/stats/breakdown?dimension=pages`);
    expect(breakdown.body).toMatchObject({ rows: [], limit: 25, offset: 0, has_more: false });
  });
});
