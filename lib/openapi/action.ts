// Declares an HTTP action together with its documented response, so the handler's return type is
// the response schema's type: `npm run typecheck` fails when a handler returns a field the schema
// lacks, lacks a field the schema requires, or returns a value of another type.
import type { Readable } from 'node:stream';
import type { Static, TSchema } from '@sinclair/typebox';
import type { ActionSchema, Context } from 'moleculer';

/** The `openapi` block of an action (types/moleculer.d.ts): what /api/docs/v1/openapi.json says of it. */
export interface ActionDoc<R extends TSchema = TSchema> {
  summary: string;
  description?: string;
  tags?: string[];
  /** Status code of success when not 200. */
  successStatus?: number;
  /**
   * The success body. A JSON schema for JSON answers; for other content (a stream, an image, a
   * script) a schema made by `binary()`/`eventStream()` in lib/openapi/responses.ts, which carry
   * their content type.
   */
  response: R;
  /**
   * Error statuses the handler itself can answer beyond those the declarations imply (404 for an
   * id in the path, 400 for params, 401/403 for `auth`/`access`, 413/415 for a body, 429 for a
   * rate limit: see lib/openapi/operation.ts), e.g. 409 for a conflict; and, below 400, the
   * bodiless answers it gives beside its success (202 accepted, 304 not modified).
   */
  errors?: number[];
}

declare const checked: unique symbol;
/**
 * An `openapi` block as ActionSchema takes it (types/moleculer.d.ts): only action() makes one, so
 * an action cannot declare a response without its handler being checked against it.
 */
export type CheckedDoc = ActionDoc & { readonly [checked]: true };

type MaybePromise<T> = T | Promise<T>;
/** Bodies that are not JSON (bytes, streams): their own fields are not the response's. */
type Opaque = Uint8Array | Readable;
type Returned<H> = H extends (...args: never[]) => infer X ? Awaited<X> : never;
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** Every key of every member of a union (keyof of a union gives only the common ones). */
type KeysOf<S> = S extends unknown ? keyof S : never;
type MemberProp<S, K extends PropertyKey> = S extends unknown ? (K extends keyof S ? S[K] : never) : never;

/**
 * The paths (`.goals[].extra`) of fields that a returned type T carries and the response type S
 * does not declare. TypeScript's structural typing accepts such extra fields, so they are found
 * here; the response validation of the test suite finds the same at run time.
 */
export type Excess<T, S, P extends string = ''> = 0 extends 1 & T
  ? never
  : unknown extends S
    ? never
    : Same<T, S> extends true
    ? never
    : T extends Opaque
    ? never
    : T extends readonly (infer TI)[]
      ? S extends readonly (infer SI)[]
        ? Excess<TI, SI, `${P}[]`>
        : never
      : T extends object
        ? {
            [K in keyof T & string]: K extends KeysOf<Extract<S, object>> ? Excess<T[K], MemberProp<Extract<S, object>, K>, `${P}.${K}`> : `${P}.${K}`;
          }[keyof T & string]
        : never;

type ExactReturn<H, S> = [Excess<Returned<H>, S>] extends [never] ? unknown : { 'fields the response schema does not declare': Excess<Returned<H>, S> };

// biome-ignore lint/suspicious/noExplicitAny: handlers annotate their own ctx (params, meta) and `this`.
type AnyHandler<S> = (this: any, ctx: Context<any, any>) => MaybePromise<S>;

/**
 * An action reached over HTTP. R is taken from `openapi.response` only (NoInfer), then the
 * handler must return Static<R> exactly.
 *
 * One gap, by design of TypeScript's inference: a string literal written in the handler's
 * returned object (`{ status: 'ok' }`) is widened to string before it is compared, so where the
 * schema has a literal or an enum, the handler writes `'ok' as const` (or returns a typed value).
 */
export function action<R extends TSchema, H extends AnyHandler<NoInfer<Static<R>>>>(
  schema: Omit<ActionSchema, 'handler' | 'openapi'> & { openapi: ActionDoc<R>; handler: H } & ExactReturn<H, NoInfer<Static<R>>>,
): ActionSchema {
  return detached(schema) as unknown as ActionSchema;
}

/**
 * A copy that shares no object or array with any other action. Moleculer sends each node's
 * actions to the others through a circular-reference filter that drops every object it has seen
 * before, shared or not (registry: `safetyObject`): a schema constant used twice (DateTime, a
 * paging rule, a tags list) would reach other nodes' OpenAPI documents as a hole. Functions,
 * regular expressions and symbol keys (TypeBox's) are kept as they are.
 */
function detached<T>(value: T): T {
  if (Array.isArray(value)) return value.map(detached) as T;
  if (value === null || typeof value !== 'object' || Object.getPrototypeOf(value) !== Object.prototype) return value;
  const copy: Record<PropertyKey, unknown> = {};
  for (const key of Reflect.ownKeys(value)) copy[key] = detached((value as Record<PropertyKey, unknown>)[key]);
  return copy as T;
}
