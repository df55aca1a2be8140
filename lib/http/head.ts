// HEAD wherever GET is answered: the request is routed as the GET it mirrors, and its answer goes
// out without a body, with GET's status and headers. Node leaves the body out of any response to a
// HEAD request (decided when the response is made), so what GET would write is written, and only
// its length is kept; an event stream is not read at all.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';

const heads = new WeakSet<IncomingMessage>();

/**
 * Turns a HEAD request into the GET it mirrors, for routing; the response still sends no body,
 * and says how long GET's body would be.
 */
export function routeHeadAsGet(req: IncomingMessage, res: ServerResponse): void {
  heads.add(req);
  req.method = 'GET';
  const end = res.end.bind(res) as (chunk?: unknown) => ServerResponse;
  res.end = ((chunk?: unknown) => {
    if (!res.headersSent && !res.hasHeader('Content-Length')) {
      if (typeof chunk === 'string' || Buffer.isBuffer(chunk)) res.setHeader('Content-Length', Buffer.byteLength(chunk));
      // A bodiless answer (a redirect): Node gives GET's `Content-Length: 0`, never HEAD's. An event
      // stream's HEAD, ended unread, has its type set and no length, as its GET.
      else if (chunk == null && !res.hasHeader('Content-Type') && res.statusCode !== 204 && res.statusCode !== 304) res.setHeader('Content-Length', 0);
    }
    return end(chunk);
  }) as ServerResponse['end'];
}

/** The method the client sent: HEAD for a request routed as GET. */
export function requestedMethod(req: IncomingMessage): string {
  return heads.has(req) ? 'HEAD' : (req.method ?? 'GET');
}

/**
 * An action's answer to a HEAD request, before it is sent: a stream (an event stream) is closed
 * unread and its headers go out at once; anything else is sent as GET would send it.
 */
export function headAnswer(req: IncomingMessage, res: ServerResponse, data: unknown, responseType: string | undefined): unknown {
  if (!heads.has(req) || !(data instanceof Readable)) return data;
  data.destroy();
  res.setHeader('Content-Type', responseType ?? 'application/octet-stream');
  return null;
}
