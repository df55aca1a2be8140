// Building blocks of response schemas (TypeBox: each one is a JSON Schema and, through Static<>,
// the TypeScript type a handler must return). Objects are closed (additionalProperties: false) so
// a field the schema does not name is caught, by the type check and by the test suite alike.
import type { Readable } from 'node:stream';
import { type Static, type TSchema, type TObject, type TProperties, Type } from '@sinclair/typebox';

/** Where a non-JSON response schema keeps its content type (read by lib/openapi/document.ts). */
export const CONTENT_TYPE = 'x-content-type';

/** A JSON object with exactly these properties (Type.Optional marks the ones that may be absent). */
export const object = <P extends TProperties>(properties: P, options: { description?: string } = {}) =>
  Type.Object(properties, { additionalProperties: false, ...options });

export const nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** RFC 3339 UTC timestamp, as every API timestamp is written. */
export const DateTime = Type.String({ format: 'date-time' });
export const Uuid = Type.String({ format: 'uuid' });

/** One of these string values; literal types in TypeScript, an enum in JSON Schema. */
export const stringEnum = <const V extends readonly string[]>(values: V, options: { description?: string } = {}) =>
  Type.Unsafe<V[number]>({ type: 'string', enum: [...values], ...options });

/** An object with one property per key, each of the same schema (a record over a fixed key list). */
export const keyed = <const K extends readonly string[], T extends TSchema>(keys: K, value: T, options: { description?: string } = {}) =>
  object(Object.fromEntries(keys.map((key) => [key, value])) as { [P in K[number]]: T }, options);

/** The page fields every list answer carries beside its list (lib/pagination.ts). */
export const pageFields = { total: Type.Integer(), limit: Type.Integer(), offset: Type.Integer(), has_more: Type.Boolean() };

/** The one list shape (lib/pagination.ts): `{items, total, limit, offset, has_more}`. */
export const page = <T extends TSchema>(item: T) => object({ items: Type.Array(item), ...pageFields });

/** `{ key: value }` with one named field, the envelope of single-resource answers (`{ goal }`). */
export const envelope = <K extends string, T extends TSchema>(key: K, item: T) => object({ [key]: item } as { [P in K]: T });

/** No body (204, or 202 from the ingest routes): the handler returns null or nothing. */
export const NoContent = Type.Unsafe<null | undefined>({ [CONTENT_TYPE]: 'none' });

/** A body that is not JSON (an image, a script): the handler returns its bytes or a stream. */
export const binary = (contentType: string) => Type.Unsafe<Buffer | Readable | string | null>({ [CONTENT_TYPE]: contentType });

/** Where a file download's schema keeps its formats: content type → schema of that body. */
export const DOWNLOAD = 'x-download';

/**
 * A file offered in several formats (an export): the handler returns the stream of the format
 * asked for. `formats` maps each content type to its body's schema (a JSON body's shape, or
 * `binary` for bytes); the answer carries a Content-Disposition naming the file.
 */
export const download = (formats: Record<string, TSchema>) => Type.Unsafe<Readable>({ [DOWNLOAD]: formats });

/** The schema of a body that is bytes (CSV, NDJSON, Parquet) in a download's formats. */
export const Bytes = Type.String({ format: 'binary' });

/** Server-Sent Events: the handler returns the Readable that moleculer-web pipes out. */
export const eventStream = () => Type.Unsafe<Readable>({ [CONTENT_TYPE]: 'text/event-stream' });

/** The one error body of every failure (lib/http/error-response.ts renders it). */
export const ErrorBody = object(
  {
    message: Type.String(),
    code: Type.String({ description: 'Stable machine-readable code, e.g. validation_failed, unauthorized, not_found, conflict, rate_limited' }),
    fields: Type.Optional(
      Type.Array(object({ field: Type.String(), message: Type.String(), type: Type.Optional(Type.String()) }), {
        description: 'Every invalid field of a validation_failed error, at once',
      }),
    ),
    details: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'Facts a client acts on, e.g. `received` (bytes stored so far) of a refused upload chunk' })),
  },
  { description: 'The error body of every failure' },
);
export type ErrorBody = Static<typeof ErrorBody>;

export type { Static, TObject, TSchema };
