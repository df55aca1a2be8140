// The HTTP gateway: one node:http server of Plumb's own. Tracker requests are read and answered
// on a direct path while a connection carries nothing else (lib/http/direct-path.ts). Node reads
// the rest; its ingest requests (the `hotPath` actions) are answered by a plain handler
// (lib/http/hot-path.ts), /metrics and the MCP server's /mcp by
// theirs (lib/metrics/endpoint.ts, lib/mcp/endpoint.ts); every other request goes to a stock
// moleculer-web gateway through its documented middleware entry (`express()`), where every route
// is an action's explicit `rest` alias (mappingPolicy "restrict"), bodies are read with
// per-action limits in `onBeforeCall`, and errors leave as JSON { message, code } from `onError`.
// What no route answers falls through to the built dashboard, then a JSON 404.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { ActionSchema, Context, ServiceBroker, ServiceSchema, ServiceSettingSchema } from 'moleculer';
import type { ApiSettingsSchema } from 'moleculer-web';
import ApiGateway from 'moleculer-web';
import { PlumbError } from '../lib/errors.ts';
import { admitRequest, CORS_PREFLIGHT_HEADERS } from '../lib/http/admission.ts';
import { sendError, sendJson } from '../lib/http/error-response.ts';
import { headAnswer, requestedMethod, routeHeadAsGet } from '../lib/http/head.ts';
import { type DirectPathOptions, GatewayServer } from '../lib/http/direct-path.ts';
import { answerDirect, answerHot, type HotRoute, hotRoutes, type PublishedRoute } from '../lib/http/hot-path.ts';
import { locateCreated } from '../lib/http/location.ts';
import { setApiSecurityHeaders } from '../lib/http/security-headers.ts';
import { type StaticAssets, loadStaticAssets } from '../lib/http/static-assets.ts';
import { shareEmbedders } from '../lib/share/embedding.ts';
import { buildOpenApiDocument, type RouteEntry } from '../lib/openapi/document.ts';
import { gatewayRouteDocs } from '../lib/openapi/gateway-routes.ts';
import { bearerMatches, METRICS_PATH, sendMetrics } from '../lib/metrics/endpoint.ts';
import { answerMcp, MCP_ENDPOINT, MCP_PATH } from '../lib/mcp/endpoint.ts';
import type { Runtime } from '../lib/runtime.ts';
import type { RequestMeta } from '../types/meta.ts';

type GatewayRequest = IncomingMessage & {
  $action?: ActionSchema;
  $params: Record<string, unknown>;
};

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;
const OPENAPI_PATH = '/api/docs/v1/openapi.json';

/** The client's X-Request-ID when it is a safe one to echo and log, else a new one. */
function requestIdOf(incoming: string | string[] | undefined): string {
  return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
}

export default function createApiService(runtime: Runtime): ServiceSchema {
  const { config, log } = runtime;
  const assets: StaticAssets = loadStaticAssets(log, { shareEmbedders: (token) => shareEmbedders(runtime.metadata(), token) });
  // The per-request line is written only at debug level; below it, no hook is attached at all.
  const logRequests = config.logLevel === 'debug' || config.logLevel === 'trace';
  const trackerPath = config.trackerScriptPath.startsWith('/') ? config.trackerScriptPath : `/${config.trackerScriptPath}`;
  const vitalsPath = trackerPath.replace(/(\.js)?$/, '-vitals.js'); // /plumb.js → /plumb-vitals.js
  const gatewayDocs = gatewayRouteDocs({ openapi: OPENAPI_PATH, tracker: trackerPath, vitals: vitalsPath, metrics: METRICS_PATH, mcp: MCP_PATH });
  const onError = (req: IncomingMessage, res: ServerResponse, err: Error) => sendError(log, req, res, err);
  /** One answered request in the metrics, and at debug level in the log. */
  const recordAnswer = (method: string, route: string, url: string, status: number, started: bigint, requestId: string) => {
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    runtime.metrics.httpRequest(method, route, status, seconds);
    if (logRequests) log.debug({ reqId: requestId, method, url, status, ms: Math.round(seconds * 1e4) / 10 }, 'request');
  };
  /** GET /metrics on this port: only with -metrics-token, and only to a request that carries it. */
  const answerMetrics = (req: IncomingMessage, res: ServerResponse) => {
    const token = config.metricsToken;
    if (token === undefined) {
      const elsewhere = config.metricsAddress ? ` (they are served at ${config.metricsAddress})` : ' (set -metrics-token or -metrics-address to serve them)';
      onError(req, res, new PlumbError(404, 'not_found', `Metrics are not served on this port${elsewhere}`));
    } else if (!bearerMatches(req, token)) {
      res.setHeader('WWW-Authenticate', 'Bearer realm="metrics"');
      onError(req, res, new PlumbError(401, 'unauthorized', 'GET /metrics needs Authorization: Bearer <the metrics token>'));
    } else {
      sendMetrics(runtime.metrics, res).catch((err: Error) => onError(req, res, err));
    }
  };

  return {
    name: 'api',
    mixins: [ApiGateway],
    settings: {
      // The server is Plumb's own (see handle); moleculer-web is reached through express().
      server: false,
      log4XXResponses: false,
      logRequest: null,
      logResponse: null,
      logRouteRegistration: 'debug',
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
          onAfterCall(ctx: Context, route: unknown, req: GatewayRequest, res: ServerResponse, data: unknown) {
            const answer = locateCreated(ctx, route, req, res, data);
            return headAnswer(req, res, answer, (ctx.meta as { $responseType?: string }).$responseType);
          },
          onError,
        },
      ],
      onError,
    } satisfies ApiSettingsSchema as ServiceSettingSchema,

    // The gateway's own helper actions (list-aliases, add/remove route) must never be reachable.
    actions: {
      listAliases: false,
      addRoute: false,
      removeRoute: false,
    },

    methods: {
      /** Every request to the node: the hot path, CORS preflights, then moleculer-web, then the dashboard or a 404. */
      handle(this: GatewayThis, req: IncomingMessage, res: ServerResponse) {
        const started = process.hrtime.bigint();
        const requestHeaders = req.headers;
        const requestId = requestIdOf(requestHeaders['x-request-id']);
        const url = req.url ?? '/';
        const queryAt = url.indexOf('?');
        const path = queryAt === -1 ? url : url.slice(0, queryAt);
        const hot = req.method === 'POST' ? this.hotRoutes.get(path) : undefined;
        // 'finish' comes once; `on` spares the wrapper and the removal `once` costs every request.
        res.on('finish', () => {
          // V8 keeps the shapes it built for Node's request and answer objects only while some object
          // has them. A node idle through a full garbage collection would build them anew at its next
          // request, and in about one process in four that rebuild left both constructors on V8's
          // slow path for good (docs/benchmarks.md, "Ingest instructions"): the last answer (and its
          // request) stays referenced.
          this.lastAnswered = res;
          recordAnswer(requestedMethod(req), routeLabel(req, path, hot !== undefined, res.statusCode), url, res.statusCode, started, requestId);
        });
        if (hot) return answerHot(runtime, req, res, hot, ['X-Request-ID', requestId], requestId);
        // The routed gateway (moleculer-web) and the MCP endpoint read the request id from the
        // headers; the hot path is handed it, and spares its headers object a new property.
        requestHeaders['x-request-id'] = requestId;
        // Deleted only when sent: deleting a property turns the headers object into a slow dictionary.
        if (requestHeaders['x-correlation-id'] !== undefined) delete requestHeaders['x-correlation-id'];
        res.setHeader('X-Request-ID', requestId);
        setApiSecurityHeaders(res);
        if (!decodablePath(path)) {
          onError(req, res, new PlumbError(400, 'bad_request', 'The request path is not valid percent-encoding'));
          return;
        }
        // Answered before routing: its bearer token is the metrics token, not an API client's.
        if (path === METRICS_PATH && req.method === 'GET') {
          answerMetrics(req, res);
          return;
        }
        // Answered before routing: a JSON-RPC body for the MCP server, which only an API-client token reaches.
        if (path === MCP_PATH) {
          answerMcp(runtime, this.broker, req, res);
          return;
        }
        if (req.method === 'OPTIONS' && this.crossOriginPaths.has(path)) {
          res.writeHead(204, CORS_PREFLIGHT_HEADERS);
          res.end();
          return;
        }
        if (req.method === 'HEAD') routeHeadAsGet(req, res);
        return this.routed(req, res, () => {
          if (assets.sendDashboard(req, res)) return;
          onError(req, res, new PlumbError(404, 'not_found', `No route for ${requestedMethod(req)} ${path}`));
        });
      },

      /** Rebuilds the aliases from every registered action's `rest` now, instead of after the debounce. */
      refreshRoutes(this: GatewayThis) {
        for (const route of this.routes) if (route.opts.autoAliases) this.regenerateAutoAliases(route);
        this.indexRoutes();
      },

      /** The routes the plain handler and the direct path answer themselves or need to know: hot paths and cross-origin paths. */
      indexRoutes(this: GatewayThis) {
        this.hotRoutes = hotRoutes(this.broker, this.aliases);
        // The direct path answers the tracker's: public, cross-origin, without a token.
        this.directRoutes = new Map([...this.hotRoutes].filter(([, route]) => route.action.crossOrigin === true));
        const actions = new Map(this.broker.registry.getActionList({}).map((item) => [item.name, item.action]));
        this.crossOriginPaths = new Set(this.aliases.filter((alias) => alias.method === 'POST' && alias.action && actions.get(alias.action)?.crossOrigin === true).map((alias) => alias.fullPath));
      },

      /** Every route the gateway answers, for the OpenAPI document. */
      routeEntries(this: GatewayThis): RouteEntry[] {
        const actions = new Map<string, ActionSchema>(this.broker.registry.getActionList({}).map((item) => [item.name, item.action as ActionSchema]));
        const routed = this.aliases.map((alias) => ({
          method: alias.method === '*' ? 'GET' : alias.method,
          path: alias.fullPath,
          action: alias.action ? (actions.get(alias.action) ?? { name: alias.action }) : undefined,
          doc: gatewayDocs.get(alias.fullPath),
        }));
        return [
          ...routed,
          { method: 'GET', path: METRICS_PATH, action: undefined, doc: gatewayDocs.get(METRICS_PATH) },
          { method: 'POST', path: MCP_PATH, action: MCP_ENDPOINT, doc: gatewayDocs.get(MCP_PATH) },
        ];
      },

      openApiDocument(this: GatewayThis) {
        return buildOpenApiDocument(this.routeEntries(), config.publicUrl);
      },
    },

    events: {
      // Services joined or left (other nodes too): moleculer-web rebuilt its aliases, so the index follows.
      '$api.aliases.regenerated'(this: GatewayThis) {
        this.indexRoutes();
      },
    },

    created() {
      const gateway = this as unknown as GatewayThis;
      gateway.hotRoutes = new Map();
      gateway.directRoutes = new Map();
      gateway.crossOriginPaths = new Set();
      gateway.routed = gateway.express();
      const direct: DirectPathOptions = {
        bodyLimitOf: (path) => {
          const route = gateway.directRoutes.get(path);
          return route && (route.action.bodyLimit ?? config.apiBodyLimitBytes);
        },
        async answer(request, body, remoteAddress) {
          const started = process.hrtime.bigint();
          const requestId = requestIdOf(request.headers['x-request-id']);
          const answer = await answerDirect(runtime, gateway.directRoutes.get(request.path), request, body, remoteAddress, requestId);
          recordAnswer('POST', request.path, request.target, answer.status, started, requestId);
          return answer;
        },
      };
      gateway.server = new GatewayServer((req, res) => gateway.handle(req, res), config.trackerHttp === 'direct' ? direct : undefined);
      // Slow clients are cut after two minutes; Node's own defaults bound the headers and the request.
      gateway.server.setTimeout(120_000);
    },

    async started() {
      const { server } = this as unknown as GatewayThis;
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(config.port, config.host, () => {
          server.off('error', reject);
          resolve();
        });
      });
      server.on('error', (err) => log.error({ err }, 'HTTP server error'));
      const address = server.address();
      if (address && typeof address === 'object') {
        const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
        log.info({ port: address.port, host: address.address, publicUrl: config.publicUrl }, `listening on http://${host}:${address.port} (public URL ${config.publicUrl})`);
      }
    },

    async stopped() {
      const { server } = this as unknown as GatewayThis;
      if (!server.listening) return;
      await new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
    },
  };
}

/**
 * What labels a request in the metrics: its route's pattern, never the raw path (whose ids would
 * make a series per site); what no route matched is `dashboard` when the dashboard answered it.
 */
function routeLabel(req: IncomingMessage, path: string, hot: boolean, status: number): string {
  if (hot || path === METRICS_PATH || path === MCP_PATH) return path;
  // The alias moleculer-web matched (its typings leave fullPath out).
  const pattern = (req as { $alias?: { fullPath?: string } }).$alias?.fullPath;
  if (pattern) return pattern;
  return status === 404 ? 'unmatched' : 'dashboard';
}

/** A path that percent-decodes: routing and the dashboard decode it, and a malformed one is the client's error. */
function decodablePath(path: string): boolean {
  if (!path.includes('%')) return true;
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}

type GatewayThis = {
  hotRoutes: Map<string, HotRoute>;
  /** The hot routes the direct path answers (lib/http/direct-path.ts), by path. */
  directRoutes: Map<string, HotRoute>;
  crossOriginPaths: Set<string>;
  routed: (req: IncomingMessage, res: ServerResponse, next: () => void) => void;
  server: Server;
  /** The last answer sent, kept so its shape outlives an idle node's garbage collections. */
  lastAnswered?: ServerResponse;
  handle(req: IncomingMessage, res: ServerResponse): void;
  indexRoutes(): void;
  express(): GatewayThis['routed'];
  routes: { opts: { autoAliases?: boolean } }[];
  regenerateAutoAliases(route: unknown): void;
  broker: ServiceBroker;
  aliases: PublishedRoute[];
  routeEntries(): RouteEntry[];
  openApiDocument(): Record<string, unknown>;
};

/** moleculer-web's hook before a call: admission, then the body merged under the path and query parameters. */
function prepareRequest(runtime: Runtime) {
  return async (ctx: Context, _route: unknown, incoming: unknown, res: ServerResponse) => {
    const req = incoming as GatewayRequest;
    const body = await admitRequest(runtime, req, res, req.$action, ctx.meta as RequestMeta);
    if (body) req.$params = { ...body, ...req.$params };
  };
}

/** The started gateway of a broker: its HTTP server, and a way to publish newly started services' routes. */
export function gatewayOf(broker: ServiceBroker): { server: Server; refreshRoutes(): void } {
  return broker.getLocalService('api') as unknown as { server: Server; refreshRoutes(): void };
}
