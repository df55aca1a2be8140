// The documentation of the routes the gateway answers itself (services/api.service.ts): this
// document, the tracking script and its web-vitals add-on. Actions document themselves.
import { Type } from '@sinclair/typebox';
import type { ActionDoc } from './action.ts';
import { binary } from './responses.ts';

export interface GatewayPaths {
  openapi: string;
  tracker: string;
  vitals: string;
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
  ]);
}
