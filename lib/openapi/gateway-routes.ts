// The documentation of the routes the gateway answers itself (services/api.service.ts): this
// document, the tracking script and its web-vitals add-on, the metrics. Actions document themselves.
import { Type } from '@sinclair/typebox';
import type { ActionDoc } from './action.ts';
import { binary } from './responses.ts';

export interface GatewayPaths {
  openapi: string;
  tracker: string;
  vitals: string;
  metrics: string;
}

const OpenApiDocument = Type.Object(
  { openapi: Type.Literal('3.1.0'), info: Type.Object({ title: Type.String(), version: Type.String() }), paths: Type.Record(Type.String(), Type.Object({})) },
  { description: 'An OpenAPI 3.1 document' },
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
  ]);
}
