// The OpenAPI document a running node serves: security on every operation, a typed answer for
// every route, the harness that holds every test's answers to it, and an independent tool
// (openapi-typescript) turning it into client types that the project's tsc checks calls against.
import { execFile } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { person } from '../support/accounts.ts';
import { checkResponse, ContractViolation } from '../support/contract.ts';
import { NODE_BIN, ROOT } from '../support/instance.ts';
import { startTestNode, type TestNode } from '../support/node.ts';

type Operation = {
  operationId: string;
  security: Record<string, string[]>[];
  responses: Record<string, { description: string; $ref?: string; content?: Record<string, { schema?: Record<string, unknown> }> }>;
};
type Document = { paths: Record<string, Record<string, Operation>>; components: Record<string, Record<string, unknown>> };

const DIR = join(ROOT, 'test-output', 'openapi-client');
let t: TestNode;
let doc: Document;

beforeAll(async () => {
  t = await startTestNode();
  doc = (await (await fetch(`${t.url}/api/docs/v1/openapi.json`)).json()) as Document;
  mkdirSync(DIR, { recursive: true });
}, 60_000);
afterAll(async () => {
  rmSync(DIR, { recursive: true, force: true });
  await t?.stop();
});

const operations = () => Object.entries(doc.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => ({ route: `${method.toUpperCase()} ${path}`, op })));
const schemes = (op: Operation) => op.security.map((s) => Object.keys(s).join('+'));

describe('GET /api/docs/v1/openapi.json', () => {
  it('names the session cookie, the bearer token and X-API-Key as its security schemes', () => {
    expect(doc.components.securitySchemes).toMatchObject({
      session: { type: 'apiKey', in: 'cookie', name: 'plumb_session' },
      bearer: { type: 'http', scheme: 'bearer' },
      apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
    });
  });

  it('gives each operation the credentials its action accepts', () => {
    const security = (route: string) => schemes(operations().find((o) => o.route === route)!.op);
    expect(security('POST /api/login')).toEqual([]);
    expect(security('GET /healthz')).toEqual([]);
    expect(security('GET /api/user/me')).toEqual(['session']);
    expect(security('POST /api/ingest/server/pageview')).toEqual(['bearer', 'apiKey']);
    expect(security('GET /api/sites/{id}/stats')).toEqual(['session', 'bearer', 'apiKey']);
    // The share links' reads are public: the token is in the path.
    expect(security('GET /api/share/{token}/stats')).toEqual([]);
  });

  it('types the success answer of every operation: a JSON schema, or a content type that is not JSON, or no body', () => {
    const untyped = operations()
      .filter(({ op }) => {
        // A browser sign-in callback succeeds with a redirect (303) and no body.
        const [status, success] = Object.entries(op.responses).find(([code]) => code < '300' || code === '303')!;
        const json = success.content?.['application/json'];
        if (json) return Object.keys(json.schema ?? {}).length === 0;
        return status !== '204' && status !== '202' && status !== '303' && !success.content;
      })
      .map(({ route }) => route);
    expect(untyped).toEqual([]);
  });

  it('closes the objects of its answers to fields they do not declare', () => {
    const open: string[] = [];
    const walk = (schema: unknown, where: string) => {
      if (!schema || typeof schema !== 'object') return;
      const s = schema as Record<string, unknown>;
      // WebAuthn options are the W3C's JSON, passed to the browser as they are.
      if (s.type === 'object' && s.properties && s.additionalProperties !== false && !String(s.description ?? '').startsWith('WebAuthn')) open.push(where);
      for (const [key, value] of Object.entries(s)) walk(value, `${where}.${key}`);
    };
    for (const { route, op } of operations()) {
      if (route === 'GET /api/docs/v1/openapi.json') continue;
      for (const [status, response] of Object.entries(op.responses)) walk(response.content?.['application/json']?.schema, `${route} ${status}`);
    }
    expect(open).toEqual([]);
  });

  it('answers every error status with the one error body, and lists the statuses the declarations imply', () => {
    const createGoal = doc.paths['/api/sites/{id}/goals'].post;
    expect(Object.keys(createGoal.responses)).toEqual(['201', '400', '401', '403', '404', '409', '413', '415', '429', '5XX']);
    for (const { op } of operations()) {
      for (const [status, response] of Object.entries(op.responses)) if (status >= '400') expect(response.$ref).toBe('#/components/responses/Error');
    }
    expect(doc.components.schemas.Error).toMatchObject({ required: ['message', 'code'], additionalProperties: false });
  });
});

describe('the contract check of the test harness', () => {
  const answer = (status: number, body: unknown) =>
    new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json; charset=utf-8', 'X-Request-ID': 'test' } });
  const goal = { name: 'Signup', type: 'event', event_name: 'signup', created_at: '2026-01-01T00:00:00.000Z' };

  it('passes an answer that matches the declared schema', async () => {
    const body = { goal: { ...goal, id: t.site.id, site_id: t.site.id } };
    await expect(checkResponse('GET', `${t.url}/api/sites/${t.site.id}/goals/${t.site.id}`, answer(200, body))).resolves.toBeUndefined();
  });

  it('fails an answer with an undeclared field, naming the route, the status and the field', async () => {
    const body = { goal: { ...goal, id: t.site.id, site_id: t.site.id, secret: 'x' } };
    const check = checkResponse('GET', `${t.url}/api/sites/${t.site.id}/goals/${t.site.id}`, answer(200, body));
    await expect(check).rejects.toThrow(ContractViolation);
    await expect(check).rejects.toThrow(/GET \/api\/sites\/\{id\}\/goals\/\{goalId\} → 200: the body does not match the declared schema:\n\s+\/goal must NOT have additional properties \(secret\)/);
  });

  it('fails a status the route does not declare, and an error body of another shape', async () => {
    await expect(checkResponse('GET', `${t.url}/api/user/me`, answer(409, { message: 'x', code: 'conflict' }))).rejects.toThrow(
      /GET \/api\/user\/me answered 409, which its contract does not declare/,
    );
    await expect(checkResponse('GET', `${t.url}/api/user/me`, answer(401, { error: 'nope' }))).rejects.toThrow(/must have required property 'message'/);
  });

  it('fails a create without the Location header its contract declares', async () => {
    const created = new Response(JSON.stringify({ goal: { ...goal, id: t.site.id, site_id: t.site.id } }), {
      status: 201,
      headers: { 'Content-Type': 'application/json', 'X-Request-ID': 'test' },
    });
    await expect(checkResponse('POST', `${t.url}/api/sites/${t.site.id}/goals`, created)).rejects.toThrow(/POST \/api\/sites\/\{id\}\/goals answered 201 without the Location header/);
  });

  it('holds real answers to the contract: a signed-in person reads their account', async () => {
    const someone = await person(t);
    const res = await fetch(`${t.url}/api/user/me`, { headers: { Cookie: someone.cookie } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ id: someone.id, email: someone.email, role: 'user' });
  });
});

/** Runs the project's tsc on a tsconfig; resolves with its output (empty when the check passed). */
/**
 * openapi-typescript's command line in a process of its own: on a document it cannot read, the
 * tool calls process.exit, which inside the test process would end the whole test run.
 */
function generateTypes(document: Document, output: string): Promise<string> {
  const input = join(DIR, 'openapi.json');
  writeFileSync(input, JSON.stringify(document));
  return new Promise((resolve) => {
    execFile(NODE_BIN, [join(ROOT, 'node_modules/openapi-typescript/bin/cli.js'), input, '--output', output], { cwd: ROOT }, (err, stdout, stderr) =>
      resolve(err ? `openapi-typescript failed (${err.message}):\n${stdout}${stderr}` : ''),
    );
  });
}

function tsc(project: string): Promise<string> {
  return new Promise((resolve) => {
    execFile(NODE_BIN, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', project], { cwd: ROOT }, (_err, stdout, stderr) => resolve(`${stdout}${stderr}`));
  });
}

/** Typed calls a client of the API writes, against the types openapi-typescript generated. */
const CLIENT = (readField: string) => `import type { paths } from './api.ts';

type Op<P extends keyof paths, M extends keyof paths[P]> = paths[P][M];
type PathOf<O> = O extends { parameters: { path: infer X } } ? X : never;
type QueryOf<O> = O extends { parameters: { query?: infer Q } } ? Q : never;
type BodyOf<O> = O extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;
type Answer<O, S extends number> = O extends { responses: { [K in S]: { content: { 'application/json': infer B } } } } ? B : never;

declare function call<T>(method: string, path: string, input?: { query?: object; body?: object }): Promise<T>;

type Breakdown = Op<'/api/sites/{id}/stats/breakdown', 'get'>;
const where: PathOf<Breakdown> = { id: '6f1c2a4e-0000-4000-8000-000000000000' };
const query: QueryOf<Breakdown> = { dimension: 'pages', limit: 10, from: '2026-01-01', to: '2026-01-31' };
const breakdown = await call<Answer<Breakdown, 200>>('GET', \`/api/sites/\${where.id}/stats/breakdown\`, { query });
const top: { value: string; visitors: number } = { value: breakdown.rows[0].value, visitors: breakdown.rows[0].visitors };

type CreateGoal = Op<'/api/sites/{id}/goals', 'post'>;
const body: BodyOf<CreateGoal> = { name: 'Signup', type: 'event', event_name: 'signup' };
const created = await call<Answer<CreateGoal, 201>>('POST', \`/api/sites/\${where.id}/goals\`, { body });
const id: string = created.goal.${readField};

export { id, top };
`;

describe('a client generated from the document by openapi-typescript', () => {
  beforeAll(async () => {
    if (!doc) throw new Error('the instance did not serve its document');
    expect(await generateTypes(doc, join(DIR, 'api.ts'))).toBe('');
    const tsconfig = { compilerOptions: { target: 'es2024', module: 'nodenext', moduleResolution: 'nodenext', strict: true, noEmit: true, allowImportingTsExtensions: true, skipLibCheck: true, types: [] } };
    writeFileSync(join(DIR, 'right.json'), JSON.stringify({ ...tsconfig, files: ['right.ts'] }));
    writeFileSync(join(DIR, 'wrong.json'), JSON.stringify({ ...tsconfig, files: ['wrong.ts'] }));
    writeFileSync(join(DIR, 'right.ts'), CLIENT('id'));
    writeFileSync(join(DIR, 'wrong.ts'), CLIENT('goal_id'));
  }, 60_000);

  it('type-checks calls with path and query parameters, a body, and typed answer fields', async () => {
    expect(await tsc(join(DIR, 'right.json'))).toBe('');
  }, 60_000);

  it('refuses a field the answer does not have', async () => {
    expect(await tsc(join(DIR, 'wrong.json'))).toMatch(/wrong\.ts\(\d+,\d+\): error TS2339: Property 'goal_id' does not exist/);
  }, 60_000);
});
