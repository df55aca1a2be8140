// The documentation of the routes the gateway answers itself (services/api.service.ts): this
// document, the tracking script and its web-vitals add-on, the metrics, the MCP server. Actions
// document themselves.
import { Type } from '@sinclair/typebox';
import type { ActionDoc } from './action.ts';
import { binary, object } from './responses.ts';

export interface GatewayPaths {
  openapi: string;
  tracker: string;
  vitals: string;
  metrics: string;
  mcp: string;
}

const OpenApiDocument = Type.Object(
  { openapi: Type.Literal('3.1.0'), info: Type.Object({ title: Type.String(), version: Type.String() }), paths: Type.Record(Type.String(), Type.Object({})) },
  { description: 'An OpenAPI 3.1 document' },
);

const JsonRpcAnswer = object(
  {
    jsonrpc: Type.Literal('2.0'),
    id: Type.Union([Type.String(), Type.Integer(), Type.Null()]),
    result: Type.Optional(Type.Unsafe<Record<string, unknown>>({ type: 'object', description: 'The method’s result, as the MCP specification defines it for the method' })),
    error: Type.Optional(object({ code: Type.Integer(), message: Type.String(), data: Type.Optional(Type.Unknown()) })),
  },
  { description: 'A JSON-RPC 2.0 response to the request in the body' },
);

export function gatewayRouteDocs(paths: GatewayPaths): Map<string, ActionDoc> {
  return new Map<string, ActionDoc>([
    [paths.openapi, { summary: 'This document: the OpenAPI 3.1 contract of the running instance', tags: ['docs'], response: OpenApiDocument }],
    [paths.tracker, { summary: 'The tracking script', tags: ['tracker'], response: binary('text/javascript'), errors: [304] }],
    [paths.vitals, { summary: 'The web-vitals add-on script', tags: ['tracker'], response: binary('text/javascript'), errors: [304] }],
    [
      paths.metrics,
      {
        summary: 'Prometheus metrics of this node (text exposition format 0.0.4)',
        description: 'Served on this port only when -metrics-token is set, to requests with `Authorization: Bearer <that token>` (401 otherwise); 404 when it is not set. A listener of its own (-metrics-address) serves the same without a token.',
        tags: ['operations'],
        response: binary('text/plain'),
        errors: [401, 404],
      },
    ],
    [
      paths.mcp,
      {
        summary: 'The MCP server (Streamable HTTP, stateless): read-only analytics tools for AI assistants',
        description:
          'One JSON-RPC message per POST (initialize, tools/list, tools/call, …), answered as JSON; a notification is accepted with 202 and no body. Needs an API-client token with the `mcp` scope; each tool reads only the token’s sites, with the token’s role. Send `Accept: application/json, text/event-stream` (406 otherwise). GET and DELETE answer 405: there is no event stream and no session.',
        tags: ['mcp'],
        response: JsonRpcAnswer,
        errors: [202, 406],
      },
    ],
  ]);
}
