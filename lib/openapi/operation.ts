// What an operation of the OpenAPI document says about who may call it and what it answers,
// derived from the same declarations the gateway and the access middleware act on (`auth`,
// `access`, `params`, `rateLimit`, `crossOrigin`, the method), so the two cannot disagree.
import type { ActionSchema } from 'moleculer';
import { type AuthMode, authModeOf } from '../auth/access.ts';
import { SESSION_COOKIE } from '../auth/sessions.ts';
import type { ActionDoc } from './action.ts';
import type { JsonSchema } from './schema.ts';
import { CONTENT_TYPE, DOWNLOAD } from './responses.ts';

export type DocumentedAction = Pick<ActionSchema, 'name' | 'params' | 'openapi' | 'auth' | 'access' | 'rest' | 'rateLimit' | 'crossOrigin' | 'location' | 'rawBody' | 'formBody'>;

export const SECURITY_SCHEMES = {
  session: {
    type: 'apiKey',
    in: 'cookie',
    name: SESSION_COOKIE,
    description: 'The dashboard session, set by /api/login (and renewed from the remember-me cookie). Unsafe methods must also pass the cross-origin check.',
  },
  bearer: { type: 'http', scheme: 'bearer', description: 'An API-client token (Account → API clients), scoped and limited to its sites' },
  apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'The same API-client token, for callers that cannot set Authorization' },
} as const;

/** Each mode's alternatives: one entry per accepted credential (OpenAPI reads the list as OR). */
const SECURITY: Record<AuthMode, Record<string, string[]>[]> = {
  none: [],
  user: [{ session: [] }],
  client: [{ bearer: [] }, { apiKey: [] }],
  any: [{ session: [] }, { bearer: [] }, { apiKey: [] }],
};

export const securityOf = (action: DocumentedAction | undefined) => SECURITY[action ? authModeOf(action) : 'none'];

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

const REASONS: Record<string, string> = {
  400: 'Invalid parameters or body (every bad field in `fields`)',
  401: 'No valid credentials, or an invalid token was presented',
  403: 'Credentials lack the role or scope, or the cross-origin check refused the request',
  404: 'Not found, or not visible to the caller',
  406: 'The Accept header does not name a type this route answers with',
  409: 'Conflicts with the current state',
  413: 'Body larger than the limit',
  415: 'Body is not JSON (or not application/octet-stream where bytes are expected), or its Content-Encoding is neither gzip nor deflate',
  422: 'The content cannot be used (see the message)',
  429: 'Rate limited; see Retry-After',
  502: 'A server Plumb relies on (the mail server) refused; the message gives its answer',
  '5XX': 'Server error or not ready (503 with Retry-After)',
};

/**
 * The error statuses a route can answer, from its declarations (see ActionDoc.errors for the rest);
 * `doc` documents a route the gateway answers itself, whose declarations are not an action's own.
 */
export function errorStatuses(method: string, pathParams: readonly string[], action: DocumentedAction | undefined, url: string, doc?: ActionDoc): string[] {
  const statuses = new Set<number>((action?.openapi ?? doc)?.errors?.filter((status) => status >= 400) ?? []);
  if (action) {
    const verb = method.toUpperCase();
    const mode = authModeOf(action);
    const params = Object.keys(action.params ?? {}).filter((name) => !name.startsWith('$$'));
    // The gateway verifies a presented token on every action route, so 401 is possible even on public ones.
    statuses.add(401);
    if (mode !== 'none' || action.access || (UNSAFE.has(verb) && !action.crossOrigin)) statuses.add(403);
    if (params.length > 0 || UNSAFE.has(verb) || action.access?.site || action.access?.team) statuses.add(400);
    if (pathParams.length > 0 || action.access?.site || action.access?.team) statuses.add(404);
    if (UNSAFE.has(verb)) {
      statuses.add(413);
      statuses.add(415);
    }
    if (action.rateLimit || url.startsWith('/api/')) statuses.add(429);
  } else if (pathParams.length > 0) {
    statuses.add(404);
  }
  return [...[...statuses].sort((a, b) => a - b).map(String), '5XX'];
}

/** Answers without a body that a route declares beside its success (ActionDoc.errors below 400). */
const BODILESS: Record<number, string> = { 202: 'Accepted, no body', 304: 'No body (Not Modified)' };

const ERROR_RESPONSE = { $ref: '#/components/responses/Error' };

/**
 * The `responses` object: the success answer with its content, the bodiless statuses it declares
 * (304), then every error status. `doc` is the action's `openapi` block, or a gateway-owned route's.
 */
export function responsesOf(method: string, pathParams: readonly string[], action: DocumentedAction | undefined, url: string, doc: ActionDoc | undefined): Record<string, unknown> {
  const status = String(doc?.successStatus ?? 200);
  const success = successResponse(doc?.response as JsonSchema | undefined);
  // The gateway sends the created resource's address from the same declaration (lib/http/location.ts).
  if (status === '201' && action?.location) success.headers = { Location: { description: 'Where the created resource is read', schema: { type: 'string' } } };
  const responses: Record<string, unknown> = { [status]: success };
  for (const empty of doc?.errors?.filter((code) => code < 400) ?? []) responses[String(empty)] = { description: BODILESS[empty] ?? 'No body' };
  const errors = action ? errorStatuses(method, pathParams, action, url, doc) : [...(doc?.errors?.filter((code) => code >= 400).map(String) ?? []), '5XX'];
  for (const code of errors) responses[code] = { ...ERROR_RESPONSE, description: REASONS[code] ?? 'Error' };
  return responses;
}

function successResponse(schema: JsonSchema | undefined): Record<string, unknown> {
  const formats = schema?.[DOWNLOAD] as Record<string, unknown> | undefined;
  if (formats) {
    return {
      description: 'The file, in the format asked for',
      headers: { 'Content-Disposition': { description: 'attachment, with the file’s name', schema: { type: 'string' } } },
      content: Object.fromEntries(Object.entries(formats).map(([type, body]) => [type, { schema: plain(body) }])),
    };
  }
  const contentType = schema?.[CONTENT_TYPE] as string | undefined;
  if (contentType === 'none') return { description: 'No body' };
  if (contentType && !contentType.includes('json')) return { description: 'Success', content: { [contentType]: { schema: { type: 'string' } } } };
  return { description: 'Success', content: { 'application/json': { schema: schema ? plain(schema) : {} } } };
}

/** A TypeBox schema as plain JSON (its Symbol-keyed bookkeeping left behind). */
export const plain = (schema: unknown): JsonSchema => JSON.parse(JSON.stringify(schema));
