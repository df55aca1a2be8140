// Plumb's own action properties, declared once; the gateway (services/api.service.ts) reads them.
import 'moleculer';
import type { AccessRule, AuthMode } from '../lib/auth/access.ts';
import type { LocationTemplate } from '../lib/http/location.ts';
import type { CheckedDoc } from '../lib/openapi/action.ts';

declare module 'moleculer' {
  interface ActionSchema {
    /**
     * Who may call it over HTTP: 'none' (public), 'user' (a signed-in person; API tokens refused),
     * 'client' (an API token), 'any' (either). Routes under /api default to 'any'.
     */
    auth?: AuthMode;
    /** Roles required beyond being authenticated (instance, site or team), enforced by lib/auth/access.ts. */
    access?: AccessRule;
    /** Largest accepted request body in bytes (default: PLUMB_API_BODY_LIMIT_BYTES). 413 beyond it. */
    bodyLimit?: number;
    /**
     * The body is bytes (Content-Type application/octet-stream), not JSON: the action receives them
     * as its `body` parameter, a Buffer; its other parameters come from the path and query.
     */
    rawBody?: boolean;
    /**
     * The body is a form that carries nothing the action needs (RFC 8058's one-click unsubscribe
     * POSTs `List-Unsubscribe=One-Click`, form-encoded): it is read within the limit and dropped,
     * whatever its Content-Type; the action's parameters come from the path and query.
     */
    formBody?: boolean;
    /** Also accept a JSON body sent as text/plain (navigator.sendBeacon cannot set application/json). */
    textBody?: boolean;
    /** Public cross-origin route (the tracker ingest): skips the cross-origin request protection. */
    crossOrigin?: boolean;
    /**
     * Served on the gateway's hot path (static POST routes only): same admission and validation,
     * without moleculer-web's general routing. For the ingest routes, where every microsecond counts.
     */
    hotPath?: boolean;
    /**
     * Where a resource this action creates (201) lives, sent as its Location header: a path
     * template, `:name` a request parameter and `{a.b}` a field of the answer, e.g.
     * '/api/sites/:id/goals/{goal.id}'; several are tried in order (lib/http/location.ts).
     */
    location?: LocationTemplate;
    /** Call timeout in milliseconds, instead of the broker's requestTimeout; 0 for none (Moleculer reads it, its typings omit it). */
    timeout?: number;
    /** Per-IP bucket this route spends from; /api routes default to 'api'. */
    rateLimit?: 'ingest' | 'api' | 'login';
    /**
     * Documentation for /api/docs/v1/openapi.json, with the response schema. Only `action()`
     * (lib/openapi/action.ts) gives it, after checking the handler's return type against it.
     */
    openapi?: CheckedDoc;
  }
}
