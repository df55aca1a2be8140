// Builds the OpenAPI 3.1 document of the running instance from the gateway's routes and the
// actions' params schemas (served at /api/docs/v1/openapi.json), so it cannot drift.
import type { ActionSchema } from 'moleculer';
import { BRAND, VERSION } from '../brand.ts';
import { fieldsOf, type JsonSchema, objectSchema } from './schema.ts';

export interface RouteEntry {
  method: string;
  /** Express-style path as the gateway matches it, e.g. /api/sites/:id. */
  path: string;
  /** Action behind the route; undefined for routes the gateway answers itself. */
  action?: Pick<ActionSchema, 'params' | 'openapi' | 'name'>;
  /** Documentation for gateway-owned routes. */
  summary?: string;
  responseType?: string;
}

const ERROR_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['message', 'code'],
  properties: { message: { type: 'string' }, code: { type: 'string' }, fields: { type: 'array', items: { type: 'object' } } },
};

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

export function buildOpenApiDocument(routes: readonly RouteEntry[], serverUrl: string): JsonSchema {
  const paths: Record<string, Record<string, unknown>> = {};
  const sorted = [...routes].sort((a, b) => a.path.localeCompare(b.path) || a.method.localeCompare(b.method));
  for (const route of sorted) {
    const method = route.method.toLowerCase();
    const { path, names } = toOpenApiPath(route.path);
    const fields = fieldsOf(route.action?.params as Record<string, string> | undefined);
    const pathFields = new Set(names);
    const parameters: unknown[] = names.map((name) => ({
      name,
      in: 'path',
      required: true,
      schema: fields.find((f) => f.name === name)?.schema ?? { type: 'string' },
    }));
    const rest = fields.filter((f) => !pathFields.has(f.name));
    const operation: Record<string, unknown> = {
      operationId: route.action?.name ?? `${method}${path.replace(/[^A-Za-z0-9]+/g, '_')}`,
      summary: route.action?.openapi?.summary ?? route.summary ?? route.action?.name ?? path,
    };
    if (route.action?.openapi?.description) operation.description = route.action.openapi.description;
    if (route.action?.openapi?.tags) operation.tags = route.action.openapi.tags;
    if (BODY_METHODS.has(method)) {
      if (rest.length > 0) {
        const bodyParams = Object.fromEntries(
          Object.entries((route.action?.params ?? {}) as Record<string, string>).filter(([name]) => !pathFields.has(name)),
        );
        operation.requestBody = { required: rest.some((f) => !f.optional), content: { 'application/json': { schema: objectSchema(bodyParams) } } };
      }
    } else {
      for (const field of rest) parameters.push({ name: field.name, in: 'query', required: !field.optional, schema: field.schema });
    }
    if (parameters.length > 0) operation.parameters = parameters;
    const successStatus = String(route.action?.openapi?.successStatus ?? 200);
    const responseType = route.action?.openapi?.responseType ?? route.responseType ?? 'application/json';
    operation.responses = {
      [successStatus]: { description: 'Success', content: { [responseType]: {} } },
      default: { description: 'Error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
    };
    paths[path] ??= {};
    paths[path][method] = operation;
  }
  return {
    openapi: '3.1.0',
    info: { title: `${BRAND} API`, version: VERSION },
    servers: [{ url: serverUrl }],
    paths,
    components: { schemas: { Error: ERROR_SCHEMA } },
  };
}
