// The OpenAPI document's security and responses, derived from the actions' declarations.
import { describe, expect, it } from '@jest/globals';
import { Type } from '@sinclair/typebox';
import type { ActionSchema } from 'moleculer';
import type { ActionDoc } from '../../lib/openapi/action.ts';
import { buildOpenApiDocument, type RouteEntry } from '../../lib/openapi/document.ts';
import { binary, eventStream, NoContent, object } from '../../lib/openapi/responses.ts';

type Operation = { security: unknown; responses: Record<string, { description: string; headers?: unknown; content?: Record<string, { schema?: unknown }>; $ref?: string }> };

const Thing = object({ id: Type.String() });
const operation = (route: RouteEntry): Operation => {
  const doc = buildOpenApiDocument([route], 'http://x');
  const path = Object.values(doc.paths as Record<string, Record<string, Operation>>)[0];
  return path[route.method.toLowerCase()];
};
/** A bare action for the document's sake: its handler is not what these tests are about. */
const act = (fields: Omit<Partial<ActionSchema>, 'openapi'> & { openapi?: ActionDoc }): ActionSchema =>
  ({ name: 'things.act', openapi: { summary: 'x', response: Thing }, ...fields }) as unknown as ActionSchema;

describe('GET /api/docs/v1/openapi.json: security', () => {
  it('declares the session cookie, the bearer token and X-API-Key as schemes', () => {
    const doc = buildOpenApiDocument([], 'http://x') as { components: { securitySchemes: Record<string, Record<string, string>> } };
    expect(doc.components.securitySchemes.session).toMatchObject({ type: 'apiKey', in: 'cookie', name: 'plumb_session' });
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.components.securitySchemes.apiKey).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-API-Key' });
  });

  it.each([
    ['none', []],
    ['user', [{ session: [] }]],
    ['client', [{ bearer: [] }, { apiKey: [] }]],
    ['any', [{ session: [] }, { bearer: [] }, { apiKey: [] }]],
  ] as const)("gives an action with auth '%s' the security %j", (auth, security) => {
    expect(operation({ method: 'GET', path: '/api/things', action: act({ rest: 'GET /api/things', auth }) }).security).toEqual(security);
  });

  it('gives each operation the credentials its declared auth accepts', () => {
    expect(operation({ method: 'GET', path: '/api/things', action: act({ rest: 'GET /api/things', auth: 'any' }) }).security).toHaveLength(3);
    expect(operation({ method: 'GET', path: '/api/things', action: act({ rest: 'GET /api/things', auth: 'user' }) }).security).toEqual([{ session: [] }]);
    expect(operation({ method: 'GET', path: '/healthz', action: act({ rest: 'GET /healthz', auth: 'none' }) }).security).toEqual([]);
  });
});

describe('GET /api/docs/v1/openapi.json: responses', () => {
  it('gives the success status its JSON schema, closed to undeclared fields', () => {
    const op = operation({ method: 'POST', path: '/api/things', action: act({ rest: 'POST /api/things', openapi: { summary: 'x', response: Thing, successStatus: 201 } }) });
    expect(op.responses['201'].content?.['application/json'].schema).toEqual({ type: 'object', additionalProperties: false, required: ['id'], properties: { id: { type: 'string' } } });
    expect(op.responses['200']).toBeUndefined();
  });

  it('declares the Location header of a create that declares where its resource lives', () => {
    const located = operation({ method: 'POST', path: '/api/things', action: act({ rest: 'POST /api/things', location: '/api/things/{id}', openapi: { summary: 'x', response: Thing, successStatus: 201 } }) });
    expect(located.responses['201'].headers).toEqual({ Location: { description: 'Where the created resource is read', schema: { type: 'string' } } });
    const unlocated = operation({ method: 'POST', path: '/api/things', action: act({ rest: 'POST /api/things', openapi: { summary: 'x', response: Thing, successStatus: 201 } }) });
    expect(unlocated.responses['201'].headers).toBeUndefined();
  });

  it('derives the error statuses from auth, access, params, the method and the rate limit', () => {
    const read = operation({
      method: 'GET',
      path: '/api/sites/:id/things',
      action: act({ rest: 'GET /api/sites/:id/things', auth: 'any', access: { site: { param: 'id', role: 'viewer' } }, params: { id: 'uuid' } }),
    });
    expect(Object.keys(read.responses)).toEqual(['200', '400', '401', '403', '404', '429', '5XX']);
    expect(read.responses['404'].$ref).toBe('#/components/responses/Error');
    const open = operation({ method: 'GET', path: '/healthz', action: act({ rest: 'GET /healthz', auth: 'none' }) });
    expect(Object.keys(open.responses)).toEqual(['200', '401', '5XX']);
    const create = operation({ method: 'POST', path: '/api/things', action: act({ rest: 'POST /api/things', auth: 'user', params: { name: 'string' }, openapi: { summary: 'x', response: Thing, errors: [409] } }) });
    expect(Object.keys(create.responses)).toEqual(['200', '400', '401', '403', '409', '413', '415', '429', '5XX']);
  });

  it('gives bodiless, binary and streamed answers their content without a JSON schema', () => {
    const gone = operation({ method: 'DELETE', path: '/api/things/:id', action: act({ rest: 'DELETE /api/things/:id', openapi: { summary: 'x', response: NoContent, successStatus: 204 } }) });
    expect(gone.responses['204']).toEqual({ description: 'No body' });
    const icon = operation({ method: 'GET', path: '/api/icons/:id', action: act({ rest: 'GET /api/icons/:id', openapi: { summary: 'x', response: binary('image/*'), errors: [304] } }) });
    expect(icon.responses['200'].content).toEqual({ 'image/*': { schema: { type: 'string' } } });
    expect(icon.responses['304']).toEqual({ description: 'No body (Not Modified)' });
    const feed = operation({ method: 'GET', path: '/api/feed', action: act({ rest: 'GET /api/feed', openapi: { summary: 'x', response: eventStream() } }) });
    expect(Object.keys(feed.responses['200'].content ?? {})).toEqual(['text/event-stream']);
  });

  it('documents a gateway-owned route from its own declaration, public and without action errors', () => {
    const op = operation({ method: 'GET', path: '/plumb.js', doc: { summary: 'The tracking script', response: binary('text/javascript'), errors: [304] } });
    expect(op.security).toEqual([]);
    expect(Object.keys(op.responses)).toEqual(['200', '304', '5XX']);
  });
});
