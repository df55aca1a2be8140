// Maps any error (ours, Moleculer's, moleculer-web's, or a bug) to the one wire format:
// JSON { message, code, fields?, details? } with the right status. Unknown errors never leak their text.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type FieldError, PlumbError, validationFailed } from '../errors.ts';
import type { Log } from '../log.ts';
import { fieldErrors, type ValidatorIssue } from '../validation.ts';

export interface RenderedError {
  status: number;
  body: { message: string; code: string; fields?: FieldError[]; details?: Record<string, unknown> };
  headers: Record<string, string>;
}

interface MoleculerLikeError extends Error {
  code?: number | string;
  type?: string;
  data?: unknown;
}

export function renderError(error: Error): RenderedError {
  const err = error as MoleculerLikeError;
  const headers: Record<string, string> = {};
  if (err instanceof PlumbError) {
    const data = (err.data ?? {}) as Record<string, unknown>;
    if (typeof data.retry_after === 'number') headers['Retry-After'] = String(data.retry_after);
    const body: RenderedError['body'] = { message: err.message, code: String(err.type) };
    if (Array.isArray(data.fields)) body.fields = (data.fields as FieldError[]).map(({ field, message, type }) => (type ? { field, message, type } : { field, message }));
    if (data.details && typeof data.details === 'object' && !Array.isArray(data.details)) body.details = data.details as Record<string, unknown>;
    return { status: Number(err.code), body, headers };
  }
  switch (err.type) {
    case 'VALIDATION_ERROR':
      // The params check's issues (from this node or another) read like a use case's own.
      return renderError(validationFailed(fieldErrors(Array.isArray(err.data) ? (err.data as ValidatorIssue[]) : [])));
    case 'NOT_FOUND':
    case 'SERVICE_NOT_FOUND':
      return { status: 404, body: { message: 'Not found', code: 'not_found' }, headers };
    case 'SERVICE_NOT_AVAILABLE':
    case 'NO_ALIAS_HANDLER':
      headers['Retry-After'] = '1';
      return { status: 503, body: { message: 'Service temporarily unavailable', code: 'unavailable' }, headers };
    case 'MEMORY_LIMIT_EXCEEDED':
      // The analytics store refused a read over the node's per-read memory cap (-query-memory-mb).
      headers['Retry-After'] = '5';
      return {
        status: 503,
        body: { message: 'This query needs more memory than the node allows one query; try a shorter range or fewer filters, or ask the operator to raise -query-memory-mb', code: 'unavailable' },
        headers,
      };
    case 'REQUEST_TIMEOUT':
      return { status: 504, body: { message: 'The request timed out', code: 'timeout' }, headers };
    case 'RATE_LIMIT_EXCEEDED':
      return { status: 429, body: { message: 'Too many requests; retry later', code: 'rate_limited' }, headers };
    case 'UNSUPPORTED_MEDIA_TYPE':
      return { status: 415, body: { message: err.message, code: 'unsupported_media_type' }, headers };
    case 'PAYLOAD_TOO_LARGE':
      return { status: 413, body: { message: err.message, code: 'payload_too_large' }, headers };
    default:
      return { status: 500, body: { message: 'Internal server error', code: 'internal_error' }, headers };
  }
}

/** An error as it is answered, with an error line when it is a failure of Plumb's own. */
export function answeredError(log: Log, err: Error, url: string | undefined): RenderedError {
  const rendered = renderError(err);
  // 503 is an expected state (starting, stopping, leader away) and 502 another server's refusal
  // (answered with its reason): neither is a failure of Plumb worth an error line.
  if (rendered.status >= 500 && rendered.status !== 503 && rendered.status !== 502) log.error({ err, url }, 'request failed');
  return rendered;
}

/** Sends an error in the wire format; a response already under way can only be cut. */
export function sendError(log: Log, req: IncomingMessage, res: ServerResponse, err: Error) {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const { status, body, headers } = answeredError(log, err, req.url);
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  sendJson(res, status, body);
}

export function sendJson(res: ServerResponse, status: number, body: unknown) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}
