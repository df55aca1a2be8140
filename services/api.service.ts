// The HTTP gateway: every route is an action's explicit `rest` alias (mappingPolicy "restrict"),
// bodies are read here with per-action limits, errors leave as JSON { message, code }, and the
// built dashboard and tracker are served from the instance itself.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { ActionSchema, Context, ServiceBroker, ServiceSchema, ServiceSettingSchema } from 'moleculer';
import { Errors } from 'moleculer';
import type { ApiSettingsSchema } from 'moleculer-web';
import ApiGateway from 'moleculer-web';
import { bearerToken } from '../lib/auth/api-clients.ts';
import { PlumbError, unauthorized } from '../lib/errors.ts';
import { readJsonBody } from '../lib/http/body.ts';
import { judgeCrossOrigin } from '../lib/http/cross-origin.ts';
import { sendAsHead } from '../lib/http/head.ts';
import { locateCreated } from '../lib/http/location.ts';
import { renderError } from '../lib/http/error-response.ts';
import { API_SECURITY_HEADERS, setApiSecurityHeaders } from '../lib/http/security-headers.ts';
import { type StaticAssets, loadStaticAssets } from '../lib/http/static-assets.ts';
import { shareEmbedders } from '../lib/share/embedding.ts';
import { buildOpenApiDocument, type RouteEntry } from '../lib/openapi/document.ts';
import { gatewayRouteDocs } from '../lib/openapi/gateway-routes.ts';
import { clientIp } from '../lib/ingest/enrich/client-ip.ts';
import { createValidator } from '../lib/validation.ts';
import type { Runtime } from '../lib/runtime.ts';
import type { RequestMeta } from '../types/meta.ts';

type GatewayRequest = IncomingMessage & {
  $action?: ActionSchema;
  $params: Record<string, unknown>;
  $ctx: Context;
  originalUrl?: string;
  parsedUrl?: string;
};

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;
/** Public cross-origin routes (the tracker ingest) send no credentials, so any origin may read the answer. */
const CORS_HEADERS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Methods': 'POST, OPTIONS',
  'Access-Control-Allow-Headers': 'Content-Type',
  'Access-Control-Max-Age': '86400',
};
const CORS_HEADER_LIST = Object.entries(CORS_HEADERS).flat();
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const OPENAPI_PATH = '/api/docs/v1/openapi.json';
/** moleculer-web's own methods, which some of the gateway's methods extend. */
const baseMethods = ApiGateway.methods as unknown as {
  resolveAlias(this: unknown, url: string, method: string): unknown;
  sendResponse(this: unknown, req: IncomingMessage, res: ServerResponse, data: unknown, action?: unknown): void;
};

interface GatewayAlias {
  method: string;
  fullPath: string;
  action: string | null;
}

export default function createApiService(runtime: Runtime): ServiceSchema {
  const { config, log } = runtime;
  const assets: StaticAssets = loadStaticAssets(log, { shareEmbedders: (token) => shareEmbedders(runtime.metadata(), token) });
  // The per-request line is written only at debug level; below it, no hook is attached at all.
  const logRequests = config.logLevel === 'debug' || config.logLevel === 'trace';
  const trackerPath = config.trackerScriptPath.startsWith('/') ? config.trackerScriptPath : `/${config.trackerScriptPath}`;
  const vitalsPath = trackerPath.replace(/(\.js)?$/, '-vitals.js'); // /plumb.js → /plumb-vitals.js
  const gatewayDocs = gatewayRouteDocs({ openapi: OPENAPI_PATH, tracker: trackerPath, vitals: vitalsPath });

  return {
    name: 'api',
    mixins: [ApiGateway],
    settings: {
      port: config.port,
      ip: config.host,
      log4XXResponses: false,
      logRequest: null,
      logResponse: null,
      logRouteRegistration: 'debug',
      httpServerTimeout: 120_000,
      // Remote nodes' routes appear this long after they join the cluster.
      debounceTime: 100,
      routes: [
        {
          name: 'plumb',
          path: '/',
          autoAliases: true,
          mappingPolicy: 'restrict',
          bodyParsers: false,
          mergeParams: true,
          aliases: {
            [`GET ${OPENAPI_PATH}`](this: GatewayThis, _req: IncomingMessage, res: ServerResponse) {
              sendJson(res, 200, this.openApiDocument());
            },
            [`GET ${trackerPath}`](req: IncomingMessage, res: ServerResponse) {
              assets.sendTracker(req, res);
            },
            [`GET ${vitalsPath}`]: (req: IncomingMessage, res: ServerResponse) => assets.sendVitals(req, res),
          },
          onBeforeCall: prepareRequest(runtime),
          onAfterCall: locateCreated,
          onError(this: GatewayThis, req: GatewayRequest, res: ServerResponse, err: Error) {
            sendError(this, req, res, err);
          },
        },
      ],
      onError(this: GatewayThis, req: GatewayRequest, res: ServerResponse, err: Error) {
        sendError(this, req, res, err);
      },
    } satisfies ApiSettingsSchema as ServiceSettingSchema,

    // The gateway's own helper actions (list-aliases, add/remove route) must never be reachable.
    actions: {
      listAliases: false,
      addRoute: false,
      removeRoute: false,
    },

    methods: {
      async httpHandler(this: GatewayThis, req: GatewayRequest, res: ServerResponse, next?: unknown) {
        const started = logRequests ? process.hrtime.bigint() : 0n;
        const incoming = req.headers['x-request-id'];
        const requestId = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
        req.headers['x-request-id'] = requestId;
        delete req.headers['x-correlation-id'];
        const url = req.url;
        if (logRequests) {
          res.once('finish', () => {
            const ms = Number(process.hrtime.bigint() - started) / 1e6;
            log.debug({ reqId: requestId, method: req.method, url, status: res.statusCode, ms: Math.round(ms * 10) / 10 }, 'request');
          });
        }
        const hot = req.method === 'POST' ? this.hotRoutes.get((url ?? '').split('?')[0]) : undefined;
        if (hot) return callHotAction(this, runtime, req, res, hot, ['X-Request-ID', requestId, ...API_SECURITY_HEADERS]);
        res.setHeader('X-Request-ID', requestId);
        setApiSecurityHeaders(res);
        if (req.method === 'OPTIONS' && this.isCrossOriginPath(url ?? '')) {
          res.writeHead(204, CORS_HEADERS);
          res.end();
          return;
        }
        return ApiGateway.methods!.httpHandler.call(this, req, res, next);
      },

      /** moleculer-web logs every non-4xx itself; sendError logs what deserves it, once. */
      errorHandler(this: GatewayThis, req: GatewayRequest, res: ServerResponse, err: Error) {
        sendError(this, req, res, err);
      },

      /** Not routed: the built dashboard's files, then the SPA shell for dashboard URLs, then JSON 404. */
      send404(this: GatewayThis, req: GatewayRequest, res: ServerResponse) {
        if (assets.sendDashboard(req, res)) return;
        sendError(this, req, res, new PlumbError(404, 'not_found', `No route for ${req.method} ${(req.url ?? '').split('?')[0]}`));
      },

      /** HEAD is answered wherever GET is: by the GET route, without its body (see sendResponse). */
      resolveAlias(this: GatewayThis, url: string, method = 'GET') {
        const found = baseMethods.resolveAlias.call(this, url, method);
        if (found || method !== 'HEAD') return found;
        return baseMethods.resolveAlias.call(this, url, 'GET');
      },

      /** An action's answer to HEAD: GET's status and headers (Content-Length too), no body. */
      sendResponse(this: GatewayThis, req: GatewayRequest, res: ServerResponse, data: unknown, action?: unknown) {
        const send = (answer: unknown) => baseMethods.sendResponse.call(this, req, res, answer, action);
        if (req.method === 'HEAD') sendAsHead(req, res, data, send);
        else send(data);
      },

      /** A CORS preflight is answered only for routes whose action is declared `crossOrigin`. */
      isCrossOriginPath(this: GatewayThis, url: string) {
        const found = this.resolveAlias(url.split('?')[0], 'POST');
        if (!found?.alias.action) return false;
        const endpoint = this.broker.registry.getActionList({}).find((item) => item.name === found.alias.action);
        return endpoint?.action.crossOrigin === true;
      },

      /** Rebuilds the aliases from every registered action's `rest` now, instead of after the debounce. */
      refreshRoutes(this: GatewayThis) {
        for (const route of this.routes) if (route.opts.autoAliases) this.regenerateAutoAliases(route);
        this.rebuildHotRoutes();
      },

      rebuildHotRoutes(this: GatewayThis) {
        const actions = new Map(this.broker.registry.getActionList({}).map((item) => [item.name, item.action]));
        this.hotRoutes = new Map();
        for (const alias of this.aliases) {
          const action = alias.action ? actions.get(alias.action) : undefined;
          if (action?.hotPath && alias.method === 'POST' && !alias.fullPath.includes(':')) {
            this.hotRoutes.set(alias.fullPath, { name: alias.action!, action, invoke: directInvoker(action, this.broker.registry.getActionEndpoints(alias.action!)) });
          }
        }
      },

      /** Every route the gateway answers, for the OpenAPI document. */
      routeEntries(this: GatewayThis): RouteEntry[] {
        const actions = new Map<string, ActionSchema>(
          this.broker.registry.getActionList({}).map((item: { name: string; action: ActionSchema }) => [item.name, item.action]),
        );
        return this.aliases.map((alias) => ({
          method: alias.method === '*' ? 'GET' : alias.method,
          path: alias.fullPath,
          action: alias.action ? (actions.get(alias.action) ?? { name: alias.action }) : undefined,
          doc: gatewayDocs.get(alias.fullPath),
        }));
      },

      openApiDocument(this: GatewayThis) {
        return buildOpenApiDocument(this.routeEntries(), config.publicUrl);
      },
    },

    events: {
      // Services joined or left (other nodes too): moleculer-web rebuilt its aliases, so the hot ones follow.
      '$api.aliases.regenerated'(this: GatewayThis) {
        this.rebuildHotRoutes();
      },
    },

    created() {
      const gateway = this as unknown as GatewayThis & { logger: { warn(...args: unknown[]): void } };
      gateway.hotRoutes = new Map();
      // moleculer-web warns whenever a client closes a streamed response early; for Server-Sent
      // Events (realtime) that is simply a closed tab, so only other stream errors are reported.
      const warn = gateway.logger.warn.bind(gateway.logger);
      gateway.logger.warn = (message: unknown, details?: { err?: { code?: string } }) => {
        if (message === 'Stream got an error.' && details?.err?.code === 'ERR_STREAM_PREMATURE_CLOSE') return;
        warn(message, details);
      };
    },

    started() {
      const address = (this as unknown as GatewayThis).server.address();
      if (address && typeof address === 'object') {
        const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
        log.info({ port: address.port, host: address.address, publicUrl: config.publicUrl }, `listening on http://${host}:${address.port} (public URL ${config.publicUrl})`);
      }
    },
  };
}

interface HotRoute {
  name: string;
  action: ActionSchema;
  /** Set when the action can be run in place of broker.call (see directInvoker). */
  invoke?: (params: Record<string, unknown>, meta: RequestMeta) => Promise<unknown>;
}

/** The registry's endpoints of an action; a local one carries its service instance. */
interface ActionEndpoints {
  localEndpoints?: { action: { name: string; rawName?: string; service?: LocalService } }[];
}

interface LocalService {
  broker: { nodeID: string };
  schema: { actions?: Record<string, { handler?: unknown } | ((ctx: Context) => unknown)> };
  /** Moleculer's context tracker: a stopping service waits until this list is empty. */
  _trackedContexts?: unknown[];
}

/** The same fastest-validator, with the same messages, as the broker's validation middleware. */
const paramsValidator = createValidator();

/**
 * The public tracker actions of this node are run without broker.call: its context and its
 * middleware chain (error handler, fallback, timeout, tracker, validator, access) cost more than
 * the rest of a tracker request. What they do for these actions is done here: the same compiled
 * parameter check with the same ValidationError (so the same 400), no access rule to apply (the
 * action declares none), and the call is tracked so a stopping node still waits for it. Anything
 * else (remote actions, API-client routes, async checks) keeps broker.call.
 */
function directInvoker(action: ActionSchema, endpoints: ActionEndpoints | undefined): HotRoute['invoke'] {
  const local = endpoints?.localEndpoints?.[0]?.action;
  const service = local?.service;
  const declared = service && local.rawName ? service.schema.actions?.[local.rawName] : undefined;
  const handler = typeof declared === 'function' ? declared : declared?.handler;
  if (!service || typeof handler !== 'function' || !action.crossOrigin || action.auth || action.access) return undefined;
  type Check = ((value: unknown, options: { meta: unknown }) => true | Record<string, unknown>[]) & { async?: boolean };
  const check = action.params ? (paramsValidator.compile(action.params) as unknown as Check) : undefined;
  if (check?.async) return undefined;
  const nodeID = service.broker.nodeID;
  return async (params, meta) => {
    const ctx = { params, meta, service, action: local, broker: service.broker, nodeID, options: {} };
    const issues = check ? check(params, { meta: ctx }) : true;
    if (issues !== true) throw new Errors.ValidationError('Parameters validation error!', '', issues.map((issue) => ({ ...issue, nodeID, action: local.name })));
    const tracked = service._trackedContexts;
    tracked?.push(ctx);
    try {
      return await handler.call(service, ctx as unknown as Context);
    } finally {
      const at = tracked ? tracked.indexOf(ctx) : -1;
      if (at !== -1) tracked!.splice(at, 1);
    }
  };
}

type GatewayThis = {
  hotRoutes: Map<string, HotRoute>;
  rebuildHotRoutes(): void;
  routes: { opts: { autoAliases?: boolean } }[];
  resolveAlias(url: string, method: string): { alias: { action: string | null } } | null | undefined;
  isCrossOriginPath(url: string): boolean;
  regenerateAutoAliases(route: unknown): void;
  broker: {
    registry: { getActionList(opts: object): { name: string; action: ActionSchema }[]; getActionEndpoints(name: string): ActionEndpoints | undefined };
    call(action: string, params: unknown, opts: object): Promise<unknown>;
  };
  aliases: GatewayAlias[];
  server: { address(): { port: number; address: string; family: string } | string | null };
  routeEntries(): RouteEntry[];
  openApiDocument(): Record<string, unknown>;
};

/**
 * Admission of one request to an action, the same on both paths: who is asking (client IP, user
 * agent, origin) into meta, the rate limit, cross-origin protection (or CORS headers for public
 * cross-origin routes), an API-client token if one is presented, then the body read with this
 * action's limit. Returns the body (undefined when there is none). With `headers`, response
 * headers are added to that list (name, value, …) for the caller to write at once, instead of
 * set one by one on `res`.
 */
async function admitRequest(runtime: Runtime, req: IncomingMessage, res: ServerResponse, action: ActionSchema | undefined, meta: RequestMeta, headers?: string[]) {
  const method = (req.method ?? 'GET').toUpperCase();
  const header = (name: string) => {
    const value = req.headers[name];
    return typeof value === 'string' && value !== '' ? value : undefined;
  };
  const ip = clientIp(req.socket.remoteAddress, req.headers, runtime.config.trustedProxyHops);
  meta.request = { ip, userAgent: header('user-agent') ?? '', origin: header('origin'), referer: header('referer'), headers: req.headers };
  const bucket = action?.rateLimit ?? ((req.url ?? '').startsWith('/api/') ? 'api' : undefined);
  if (bucket) {
    const limited = runtime.rateLimits.consume(bucket, ip);
    if (limited) await limited;
  }
  if (action?.crossOrigin) {
    if (headers) headers.push(...CORS_HEADER_LIST);
    else for (const [name, value] of Object.entries(CORS_HEADERS)) res.setHeader(name, value);
  } else {
    const verdict = judgeCrossOrigin(method, req.headers, runtime.config.publicUrl);
    if (!verdict.allowed) throw new PlumbError(403, 'cross_origin_rejected', `Cross-origin request rejected: ${verdict.reason}`);
  }
  const token = bearerToken(req.headers);
  if (token !== undefined) {
    const client = await runtime.apiClients.verify(token);
    if (!client) throw unauthorized('The API token is invalid, expired or revoked');
    meta.apiClient = client;
  } else if (!action?.crossOrigin && req.headers.cookie) {
    const signedIn = await runtime.sessions.authenticate(req.headers.cookie);
    if (signedIn) {
      meta.user = signedIn.user;
      meta.session = signedIn.session;
      // Renewed from remember-me: the browser gets the new session and the rotated token.
      if (signedIn.setCookies.length > 0) res.setHeader('Set-Cookie', signedIn.setCookies);
    }
  }
  if (!BODY_METHODS.has(method)) return undefined;
  return readJsonBody(req, { limitBytes: action?.bodyLimit ?? runtime.config.apiBodyLimitBytes, acceptTextPlain: action?.textBody === true });
}

/** moleculer-web's hook: admission, then the body merged under the path and query parameters. */
function prepareRequest(runtime: Runtime) {
  return async (ctx: Context, _route: unknown, incoming: unknown, res: ServerResponse) => {
    const req = incoming as GatewayRequest;
    const body = await admitRequest(runtime, req, res, req.$action, ctx.meta as RequestMeta);
    if (body) req.$params = { ...body, ...req.$params };
  };
}

/**
 * The hot path for `hotPath` actions (ingest): the same admission and the same action call with
 * its validation, without moleculer-web's general routing, which costs more than the rest of an
 * ingest request together. Answers with the action's success status. `headers` (name, value, …)
 * are the response headers due so far; they are written in one go with the answer, which costs
 * less than setting each on the response.
 */
async function callHotAction(gateway: GatewayThis, runtime: Runtime, req: GatewayRequest, res: ServerResponse, route: HotRoute, headers: string[]) {
  try {
    const meta = {} as RequestMeta;
    const body = await admitRequest(runtime, req, res, route.action, meta, headers);
    const params = body ?? {};
    const result = route.invoke
      ? await route.invoke(params, meta)
      : await gateway.broker.call(route.name, params, { meta, requestID: req.headers['x-request-id'] as string });
    const status = route.action.openapi?.successStatus ?? 200;
    if (result === null || result === undefined) {
      headers.push('Content-Length', '0');
      res.writeHead(status, headers);
      res.end();
    } else {
      setHeaders(res, headers);
      sendJson(res, status, result);
    }
  } catch (err) {
    if (!res.headersSent) setHeaders(res, headers);
    sendError(gateway, req, res, err as Error);
  }
}

function setHeaders(res: ServerResponse, headers: readonly string[]) {
  for (let i = 0; i < headers.length; i += 2) res.setHeader(headers[i], headers[i + 1]);
}

function sendError(gateway: GatewayThis, req: GatewayRequest, res: ServerResponse, err: Error) {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const { status, body, headers } = renderError(err);
  // 503 is an expected state (starting, stopping, leader away), not a failure worth an error line.
  if (status >= 500 && status !== 503) (gateway as unknown as { logger: { error(...a: unknown[]): void } }).logger.error({ err, url: req.url }, 'request failed');
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  sendJson(res, status, body);
}

function sendJson(res: ServerResponse, status: number, body: unknown) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

/** The started gateway of a broker: its HTTP server, and a way to publish newly started services' routes. */
export function gatewayOf(broker: ServiceBroker): { server: Server; refreshRoutes(): void } {
  return broker.getLocalService('api') as unknown as { server: Server; refreshRoutes(): void };
}
