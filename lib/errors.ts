// The one error type of Plumb. Every failure that reaches a client is a PlumbError rendered as
// JSON `{ message, code, fields? }` with its HTTP status (see lib/http/error-response.ts).
import { Errors } from 'moleculer';

export type ErrorCode =
  | 'validation_failed'
  | 'invalid_json'
  | 'bad_request'
  | 'unauthorized'
  | 'password_required'
  | 'forbidden'
  | 'cross_origin_rejected'
  | 'not_found'
  | 'method_not_allowed'
  | 'not_acceptable'
  | 'conflict'
  | 'payload_too_large'
  | 'unprocessable'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'not_ready'
  | 'unavailable'
  | 'bad_gateway'
  | 'internal_error';

/**
 * One bad field of a 400 `validation_failed`: its path as the request names it (`name`,
 * `steps[1].value`, `revenue.currency`), a plain sentence that starts with that name, and the
 * rule it broke when it has one (`required`, `stringMax`, `enumValue`, …).
 */
export interface FieldError {
  field: string;
  message: string;
  type?: string;
}

/**
 * Extends MoleculerError so a PlumbError thrown inside an action on another node crosses the
 * transporter intact (code, type and data are serialised by Moleculer).
 */
export class PlumbError extends Errors.MoleculerError {
  constructor(status: number, code: ErrorCode, message: string, data?: Record<string, unknown>) {
    super(message, status, code, data);
    this.name = 'PlumbError';
  }
}

/** Every bad field of a request at once; the message is their sentences, so a client showing only it misses none. */
export const validationFailed = (fields: FieldError[]) =>
  new PlumbError(400, 'validation_failed', fields.length > 0 ? fields.map((f) => f.message).join('; ') : 'The request is invalid', { fields });
export const unauthorized = (message = 'Authentication required') => new PlumbError(401, 'unauthorized', message);
export const forbidden = (message = 'You do not have access to this resource') => new PlumbError(403, 'forbidden', message);
export const notFound = (message = 'Not found') => new PlumbError(404, 'not_found', message);
export const conflict = (message: string, details?: Record<string, unknown>) => new PlumbError(409, 'conflict', message, details ? { details } : undefined);
/** Well-formed, but the content cannot be used (an upload whose checksum does not match, a file that is not an export). */
export const unprocessable = (message: string, details?: Record<string, unknown>) => new PlumbError(422, 'unprocessable', message, details ? { details } : undefined);
export const payloadTooLarge = (limitBytes: number) =>
  new PlumbError(413, 'payload_too_large', `Request body exceeds the limit of ${limitBytes} bytes`, { limit_bytes: limitBytes });
export const rateLimited = (retryAfterSeconds: number) =>
  new PlumbError(429, 'rate_limited', 'Too many requests; retry later', { retry_after: retryAfterSeconds });
export const unavailable = (message: string, retryAfterSeconds?: number) =>
  new PlumbError(503, 'unavailable', message, retryAfterSeconds === undefined ? undefined : { retry_after: retryAfterSeconds });

/** A server Plumb relies on (the SMTP server) refused or could not be reached; the message says what it answered. */
export const badGateway = (message: string) => new PlumbError(502, 'bad_gateway', message);

/** Raised at start-up for a bad setting; the CLI prints it and exits non-zero. */
export class ConfigError extends Error {
  readonly setting: string;
  constructor(setting: string, message: string) {
    super(`${setting}: ${message}`);
    this.name = 'ConfigError';
    this.setting = setting;
  }
}
