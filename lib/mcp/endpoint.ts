// POST /mcp, answered by the gateway's plain handler in front of its routes (like /metrics): the
// request is admitted as any API request is (the API rate limit, the cross-origin check, the token
// verified, the body read within the API's limit), must carry an API-client token with the `mcp`
// scope, and is then answered by the MCP server (lib/mcp/server.ts, loaded on first use). A
// session cookie counts for nothing here. GET and DELETE, which a stateful server would use for
// its event stream and session end, are answered 405.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ActionSchema, ServiceBroker } from 'moleculer';
import type { RequestMeta } from '../../types/meta.ts';
import { PlumbError, forbidden, unauthorized } from '../errors.ts';
import { admitRequest } from '../http/admission.ts';
import { sendError } from '../http/error-response.ts';
import type { Runtime } from '../runtime.ts';
import type { ToolRunner } from './server.ts';

export const MCP_PATH = '/mcp';

/**
 * The endpoint's declarations, as an action's would read: admission spends from the API's bucket
 * for it, and the OpenAPI document derives its security and error answers from the same lines.
 */
export const MCP_ENDPOINT = { name: 'mcp.endpoint', rest: `POST ${MCP_PATH}`, auth: 'client', rateLimit: 'api' } satisfies Partial<ActionSchema> as ActionSchema;

let serverModule: Promise<typeof import('./server.ts')> | undefined;
/** The SDK and the tools' schemas, imported once, on the first request that needs them. */
function mcpServer(): Promise<typeof import('./server.ts')> {
  serverModule ??= import('./server.ts').catch((err: unknown) => {
    serverModule = undefined;
    throw err;
  });
  return serverModule;
}

/** The request as the SDK's web-standard transport reads it (the body goes in already parsed). */
function webRequest(req: IncomingMessage, publicUrl: string): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  return new Request(new URL(MCP_PATH, publicUrl), { method: 'POST', headers });
}

async function answer(runtime: Runtime, broker: ServiceBroker, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method !== 'POST') {
    res.setHeader('Allow', 'POST');
    throw new PlumbError(405, 'method_not_allowed', `${MCP_PATH} answers POST only: this MCP server is stateless, with no event stream to open and no session to end`);
  }
  const meta = {} as RequestMeta;
  const body = await admitRequest(runtime, req, res, MCP_ENDPOINT, meta);
  const client = meta.apiClient;
  if (!client) throw unauthorized(`${MCP_PATH} needs Authorization: Bearer <an API-client token with the mcp scope>`);
  if (!client.scopes.includes('mcp')) throw forbidden('This token lacks the mcp scope');
  if (body === undefined) throw new PlumbError(400, 'bad_request', 'The body must be a JSON-RPC message');
  const { answerMcpRequest } = await mcpServer();
  const run: ToolRunner = (name, args) => broker.call(`mcp.${name}`, args, { meta: { apiClient: client }, requestID: req.headers['x-request-id'] as string });
  const response = await answerMcpRequest(webRequest(req, runtime.config.publicUrl), body, run, runtime.log);
  res.writeHead(response.status, Object.fromEntries(response.headers));
  res.end(Buffer.from(await response.arrayBuffer()));
}

/** Answers one request to MCP_PATH; every refusal is the JSON error body of every route. */
export function answerMcp(runtime: Runtime, broker: ServiceBroker, req: IncomingMessage, res: ServerResponse): void {
  answer(runtime, broker, req, res).catch((err: Error) => {
    if (err instanceof PlumbError && err.code === 401) res.setHeader('WWW-Authenticate', 'Bearer realm="mcp"');
    sendError(runtime.log, req, res, err);
  });
}
