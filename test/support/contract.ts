// Holds every answer a test gets from a Plumb instance to the instance's own published contract
// (/api/docs/v1/openapi.json): the route and status must be declared, the content type must be
// the declared one, and a JSON body must match the declared schema. A mismatch fails the test with
// the route, the status and the schema error. Installed for every test file by contract-setup.ts.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

const DOC_PATH = '/api/docs/v1/openapi.json';

interface MediaType {
  schema?: Record<string, unknown>;
}
interface ResponseObject {
  $ref?: string;
  content?: Record<string, MediaType>;
  headers?: Record<string, unknown>;
}
interface Operation {
  responses: Record<string, ResponseObject>;
}
interface Document {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown>; responses: Record<string, ResponseObject> };
}

interface Contract {
  doc: Document;
  routes: { template: string; pattern: RegExp; literals: number }[];
  validators: Map<string, ValidateFunction>;
}

export class ContractViolation extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ContractViolation';
  }
}

/** fetch() as it was before contract-setup.ts replaced it: for the harness's own probes (readiness). */
export const nativeFetch = globalThis.fetch;
const ajv = new Ajv2020({ strict: false, allErrors: true });
(addFormats as unknown as (a: Ajv2020) => void)(ajv);
/** Per origin: the contract, or null for a server that publishes none (a webhook receiver, ClickHouse). */
const contracts = new Map<string, Promise<Contract | null>>();

async function loadContract(origin: string): Promise<Contract | null> {
  // Bounded: an instance that is stopping may hold the connection without answering.
  const res = await nativeFetch(`${origin}${DOC_PATH}`, { signal: AbortSignal.timeout(5000) }).catch(() => undefined);
  if (res?.status !== 200) return null;
  const doc = (await res.json().catch(() => undefined)) as Document | undefined;
  if (!doc?.openapi || !doc.paths) return null;
  const routes = Object.keys(doc.paths).map((template) => ({
    template,
    pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`),
    literals: template.split('/').filter((segment) => segment !== '' && !segment.startsWith('{')).length,
  }));
  return { doc, routes, validators: new Map() };
}

export function contractOf(origin: string): Promise<Contract | null> {
  let found = contracts.get(origin);
  if (!found) {
    found = loadContract(origin);
    contracts.set(origin, found);
    // An instance that was not answering yet (or has gone) may publish it on a later try.
    void found.then((contract) => contract ?? contracts.delete(origin));
  }
  return found;
}

/** The template that matches the path; a literal segment beats a parameter (`goals/stats` over `goals/{goalId}`). */
function templateOf(contract: Contract, path: string): string | undefined {
  let best: Contract['routes'][number] | undefined;
  for (const route of contract.routes) if (route.pattern.test(path) && (!best || route.literals > best.literals)) best = route;
  return best?.template;
}

function operationOf(contract: Contract, verb: string, path: string): { template?: string; operation?: Operation } {
  const template = templateOf(contract, path);
  if (!template) return {};
  const methods = contract.doc.paths[template];
  return { template, operation: methods[verb] ?? (verb === 'head' ? methods.get : undefined) };
}

function resolve(contract: Contract, response: ResponseObject): ResponseObject {
  const name = response.$ref?.replace('#/components/responses/', '');
  return name ? { ...contract.doc.components.responses[name], ...response, $ref: undefined } : response;
}

function validatorOf(contract: Contract, key: string, schema: Record<string, unknown>): ValidateFunction {
  let validate = contract.validators.get(key);
  if (!validate) {
    // The components travel with the schema so its `#/components/...` references resolve.
    validate = ajv.compile({ ...schema, components: contract.doc.components });
    contract.validators.set(key, validate);
  }
  return validate;
}

const mediaMatches = (declared: string, actual: string) =>
  declared === actual || (declared.endsWith('/*') && actual.startsWith(declared.slice(0, -1))) || (declared === 'application/json' && actual.endsWith('+json'));

/**
 * Checks one answer of a Plumb instance against its contract; throws a ContractViolation naming
 * the route, the status and what does not match. Answers of servers without a contract pass.
 */
export async function checkResponse(method: string, url: string, res: Response): Promise<void> {
  const { origin, pathname } = new URL(url);
  if (pathname === DOC_PATH || !res.headers.has('x-request-id')) return;
  let contract = await contractOf(origin);
  if (!contract) return;
  const verb = method.toLowerCase();
  let { template, operation } = operationOf(contract, verb, pathname);
  if (!operation) {
    // Routes appear as services start (the gateway answers first) and as cluster nodes join.
    contracts.delete(origin);
    contract = await contractOf(origin);
    if (!contract) return;
    ({ template, operation } = operationOf(contract, verb, pathname));
  }
  const route = `${method.toUpperCase()} ${template ?? pathname}`;
  const contentType = (res.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
  if (!operation) {
    // Not an API route: the dashboard's files and shell, or the JSON 404/405 of an unknown route.
    if (contentType !== 'application/json') return;
    if (res.status !== 404 && res.status !== 405) throw new ContractViolation(`${route} is not in the contract, yet answered ${res.status} with JSON`);
    // A HEAD answer carries no body to check.
    if (verb === 'head') return;
    return checkBody(contract, `${route} (no such route)`, res, 'error', contract.doc.components.schemas.Error as Record<string, unknown>);
  }
  if (undocumented(operation)) return;
  const status = String(res.status);
  const declared = operation.responses[status] ?? operation.responses[`${status[0]}XX`] ?? operation.responses.default;
  if (!declared) {
    const body = await res.clone().text();
    throw new ContractViolation(`${route} answered ${status}, which its contract does not declare (declared: ${Object.keys(operation.responses).join(', ')})\nbody: ${body.slice(0, 500)}`);
  }
  const response = resolve(contract, declared);
  const content = response.content ?? {};
  for (const header of Object.keys(response.headers ?? {})) {
    if (!res.headers.has(header)) throw new ContractViolation(`${route} answered ${status} without the ${header} header its contract declares`);
  }
  const hasBody = verb !== 'head' && res.status !== 204 && res.status !== 304;
  if (!hasBody) return;
  const media = Object.keys(content).find((type) => mediaMatches(type, contentType));
  if (Object.keys(content).length === 0) {
    const body = await res.clone().text();
    if (body !== '') throw new ContractViolation(`${route} answered ${status} with a body, where its contract declares none\nbody: ${body.slice(0, 500)}`);
    return;
  }
  if (!media) throw new ContractViolation(`${route} answered ${status} as ${contentType || 'no content type'}, where its contract declares ${Object.keys(content).join(', ')}`);
  const schema = content[media].schema;
  // A JSON document only: newline-delimited JSON (application/x-ndjson) is many documents.
  if ((media === 'application/json' || media.endsWith('+json')) && schema) await checkBody(contract, `${route} → ${status}`, res, `${verb} ${template} ${status}`, schema);
}

/**
 * An operation published without a success schema: only a test's own stand-in services make one
 * (every product action declares its response, and the contract test asserts none is missing), so
 * there is nothing to hold their answers to.
 */
const undocumented = (operation: Operation) =>
  Object.entries(operation.responses).some(([status, response]) => status < '300' && response.content?.['application/json'] && Object.keys(response.content['application/json'].schema ?? {}).length === 0);

async function checkBody(contract: Contract, what: string, res: Response, key: string, schema: Record<string, unknown>): Promise<void> {
  const text = await res.clone().text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new ContractViolation(`${what}: the body is not JSON\nbody: ${text.slice(0, 500)}`);
  }
  const validate = validatorOf(contract, key, schema);
  if (!validate(body)) {
    const errors = (validate.errors ?? []).map((e) => `  ${e.instancePath || '(body)'} ${e.message}${e.params && 'additionalProperty' in e.params ? ` (${String(e.params.additionalProperty)})` : ''}`);
    throw new ContractViolation(`${what}: the body does not match the declared schema:\n${errors.join('\n')}\nbody: ${text.slice(0, 1000)}`);
  }
}

/** fetch(), with every answer of a Plumb instance checked against its contract. */
export async function contractFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const res = await nativeFetch(input, init);
  const url = input instanceof Request ? input.url : String(input);
  const method = init?.method ?? (input instanceof Request ? input.method : 'GET');
  await checkResponse(method, url, res);
  return res;
}
