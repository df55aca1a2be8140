// The ingest hot path: tracker and server ingest requests (`hotPath` actions on fixed POST paths)
// are answered by a plain handler in front of the routed gateway, whose general routing costs
// more than the rest of an ingest request. The action itself is called through Moleculer's public
// API (a local service's `actions` as documented; broker.call for one on another node), so the
// broker's middlewares run as for any call: the one params validator with the action's schema,
// access rules, and context tracking that lets a stopping node finish what it accepted.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ActionSchema, ServiceBroker } from 'moleculer';
import type { RequestMeta } from '../../types/meta.ts';
import { unavailable } from '../errors.ts';
import type { Runtime } from '../runtime.ts';
import { admitRequest, CORS_HEADER_LIST, describeRequest, takeRateToken } from './admission.ts';
import { parseJsonBody } from './body.ts';
import type { DirectAnswer } from './direct-path.ts';
import { answeredError, renderError, sendError, sendJson } from './error-response.ts';
import type { DirectRequest } from './request-head.ts';
import { API_SECURITY_HEADERS, setApiSecurityHeaders } from './security-headers.ts';

export interface HotRoute {
  action: ActionSchema;
  call(params: Record<string, unknown>, meta: RequestMeta, requestID: string): Promise<unknown>;
}

/** A route the gateway has published: method, full path, and the action it calls. */
export interface PublishedRoute {
  method: string;
  fullPath: string;
  action: string | null;
}

/** The hot routes among the published ones, by path: `hotPath` actions on POST paths without parameters. */
export function hotRoutes(broker: ServiceBroker, routes: readonly PublishedRoute[]): Map<string, HotRoute> {
  const actions = new Map(broker.registry.getActionList({}).map((item) => [item.name, item.action as ActionSchema]));
  const hot = new Map<string, HotRoute>();
  for (const route of routes) {
    const action = route.action ? actions.get(route.action) : undefined;
    if (route.action && action?.hotPath && route.method === 'POST' && !route.fullPath.includes(':')) {
      hot.set(route.fullPath, { action, call: caller(broker, route.action) });
    }
  }
  return hot;
}

function caller(broker: ServiceBroker, name: string): HotRoute['call'] {
  for (const service of broker.services) {
    const prefix = `${service.fullName}.`;
    if (!name.startsWith(prefix)) continue;
    const local = service.actions[name.slice(prefix.length)];
    if (local) return (params, meta, requestID) => local(params, { meta, requestID });
  }
  return (params, meta, requestID) => broker.call(name, params, { meta, requestID });
}

/**
 * Answers one hot-path request: admission, the action, then its success status. `headers` (name,
 * value, …) are the response headers due so far; they are written in one go with the answer,
 * which costs less than setting each on the response. An answer without a body (the tracker's
 * 202) goes without the API's hardening headers: they tell a browser how to treat content, and
 * Node checks every header of every answer (docs/decisions.md, "The ingest answer carries no
 * content headers"). An answer with a body, an error's included, has them all.
 */
export async function answerHot(runtime: Runtime, req: IncomingMessage, res: ServerResponse, route: HotRoute, headers: string[], requestID: string) {
  try {
    const meta = {} as RequestMeta;
    const body = await admitRequest(runtime, req, res, route.action, meta, headers);
    const result = await route.call(body ?? {}, meta, requestID);
    const status = route.action.openapi?.successStatus ?? 200;
    if (result === null || result === undefined) {
      headers.push('Content-Length', '0');
      res.writeHead(status, headers);
      res.end();
    } else {
      setContentHeaders(res, headers);
      sendJson(res, status, result);
    }
  } catch (err) {
    // Every hot route is an ingest route: what it refuses is counted by the reason it gives.
    runtime.metrics.ingest('refused', renderError(err as Error).body.code);
    if (!res.headersSent) setContentHeaders(res, headers);
    sendError(runtime.log, req, res, err as Error);
  }
}

/** The headers due so far, and the API's hardening headers, on an answer that has a body. */
function setContentHeaders(res: ServerResponse, headers: readonly string[]) {
  for (let i = 0; i < headers.length; i += 2) res.setHeader(headers[i], headers[i + 1]);
  setApiSecurityHeaders(res);
}

/**
 * Answers a tracker request the direct path has read (lib/http/direct-path.ts) as answerHot
 * answers one Node has read: the same admission for a public cross-origin route (who is asking,
 * the CORS header, the rate limit; such a request carries no token, or it is Node's to read), the
 * same body parser, the action, and the same answers and errors, as a status, headers and a body.
 */
export async function answerDirect(runtime: Runtime, route: HotRoute | undefined, request: DirectRequest, body: Buffer, remoteAddress: string | undefined, requestID: string): Promise<DirectAnswer> {
  const headers = ['X-Request-ID', requestID, ...CORS_HEADER_LIST];
  try {
    // The routes are indexed again as services come and go: the one this request was read for may have gone since.
    if (route === undefined) throw unavailable('The ingest service is not available on this node', 1);
    const meta = { request: describeRequest(runtime, remoteAddress, request.headers) } as RequestMeta;
    const limited = takeRateToken(runtime, route.action, request.target, meta.request.ip);
    if (limited) await limited;
    const params = parseJsonBody(body, request.headers['content-type'], route.action.textBody === true);
    const result = await route.call(params ?? {}, meta, requestID);
    const status = route.action.openapi?.successStatus ?? 200;
    if (result === null || result === undefined) {
      headers.push('Content-Length', '0');
      return { status, headers, body: '' };
    }
    return jsonAnswer(status, headers, result);
  } catch (err) {
    const { status, body: error, headers: errorHeaders } = answeredError(runtime.log, err as Error, request.target);
    runtime.metrics.ingest('refused', error.code);
    return jsonAnswer(status, headers, error, errorHeaders);
  }
}

/** A JSON answer with the API's hardening headers and an error's own (Retry-After), as sendError writes it. */
function jsonAnswer(status: number, headers: string[], value: unknown, errorHeaders: Record<string, string> = {}): DirectAnswer {
  const text = JSON.stringify(value);
  headers.push(...API_SECURITY_HEADERS);
  for (const [name, headerValue] of Object.entries(errorHeaders)) headers.push(name, headerValue);
  headers.push('Content-Type', 'application/json; charset=utf-8', 'Content-Length', String(Buffer.byteLength(text)));
  return { status, headers, body: text };
}
