// Builds the OpenAPI 3.1 document of the running instance (served at /api/docs/v1/openapi.json)
// from the gateway's routes and each action's declarations: `params` give the parameters and
// bodies, `auth` the security, `openapi.response` the success body (the same TypeBox schema that
// types the handler), and the declarations together the error statuses. Nothing is written twice.
import type { ActionSchema } from 'moleculer';
import { BRAND, VERSION } from '../brand.ts';
import type { ActionDoc } from './action.ts';
import { type DocumentedAction, plain, responsesOf, SECURITY_SCHEMES, securityOf } from './operation.ts';
import { ErrorBody } from './responses.ts';
import { fieldsOf, type JsonSchema, objectSchema } from './schema.ts';

export interface RouteEntry {
  method: string;
  /** Express-style path as the gateway matches it, e.g. /api/sites/:id. */
  path: string;
  /** Action behind the route; undefined for routes the gateway answers itself. */
  action?: DocumentedAction | Pick<ActionSchema, 'name'>;
  /** Documentation of a route the gateway answers itself (lib/openapi/gateway-routes.ts). */
  doc?: ActionDoc;
}

const BODY_METHODS = new Set(['post', 'put', 'patch']);

/** `/api/sites/:id` → `/api/sites/{id}`, and the names of the path parameters. */
export function toOpenApiPath(path: string): { path: string; names: string[] } {
  const names: string[] = [];
  const converted = path.replace(/:([A-Za-z0-9_]+)\??/g, (_, name: string) => {
    names.push(name);
    return `{${name}}`;
  });
  return { path: converted, names };
}

function operationOf(route: RouteEntry): Record<string, unknown> {
  const method = route.method.toLowerCase();
  const action = route.action as DocumentedAction | undefined;
  const { path, names } = toOpenApiPath(route.path);
  const params = (action?.params ?? {}) as Record<string, string>;
  const fields = fieldsOf(params);
  const pathFields = new Set(names);
  const parameters: unknown[] = names.map((name) => ({
    name,
    in: 'path',
    required: true,
    schema: fields.find((f) => f.name === name)?.schema ?? { type: 'string' },
  }));
  const rest = fields.filter((f) => !pathFields.has(f.name));
  const doc = action?.openapi ?? route.doc;
  const operation: Record<string, unknown> = {
    operationId: action?.name ?? `${method}${path.replace(/[^A-Za-z0-9]+/g, '_')}`,
    summary: doc?.summary ?? action?.name ?? path,
  };
  if (doc?.description) operation.description = doc.description;
  if (doc?.tags) operation.tags = doc.tags;
  if (action?.rawBody) {
    // Bytes in the body; every other parameter is in the query.
    operation.requestBody = { required: true, content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } };
    for (const field of rest.filter((f) => f.name !== 'body')) parameters.push({ name: field.name, in: 'query', required: !field.optional, schema: field.schema });
  } else if (action?.formBody) {
    // A form whose fields are not read (RFC 8058's one-click POST); every parameter is in the query.
    operation.requestBody = { required: false, content: { 'application/x-www-form-urlencoded': { schema: { type: 'object' } } } };
    for (const field of rest) parameters.push({ name: field.name, in: 'query', required: !field.optional, schema: field.schema });
  } else if (BODY_METHODS.has(method)) {
    if (rest.length > 0) {
      const bodyParams = Object.fromEntries(Object.entries(params).filter(([name]) => !pathFields.has(name)));
      operation.requestBody = { required: rest.some((f) => !f.optional), content: { 'application/json': { schema: objectSchema(bodyParams) } } };
    }
  } else {
    for (const field of rest) parameters.push({ name: field.name, in: 'query', required: !field.optional, schema: field.schema });
  }
  if (parameters.length > 0) operation.parameters = parameters;
  operation.security = securityOf(action);
  operation.responses = responsesOf(method, names, action, route.path, doc as ActionDoc | undefined);
  return operation;
}

export function buildOpenApiDocument(routes: readonly RouteEntry[], serverUrl: string): JsonSchema {
  const paths: Record<string, Record<string, unknown>> = {};
  const sorted = [...routes].sort((a, b) => a.path.localeCompare(b.path) || a.method.localeCompare(b.method));
  for (const route of sorted) {
    const path = toOpenApiPath(route.path).path;
    paths[path] ??= {};
    paths[path][route.method.toLowerCase()] = operationOf(route);
  }
  return {
    openapi: '3.1.0',
    info: { title: `${BRAND} API`, version: VERSION },
    servers: [{ url: serverUrl }],
    paths,
    components: {
      schemas: { Error: plain(ErrorBody) },
      responses: { Error: { description: 'Error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } } },
      securitySchemes: SECURITY_SCHEMES,
    },
  };
}
