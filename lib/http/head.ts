// HEAD wherever GET is answered: the GET route runs and its answer goes out without a body, with
// GET's status and headers. Node leaves the body out of any response to a HEAD request, so what
// GET would write is written, and only its length is kept; an event stream is not read at all.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';

/**
 * Sends an action's answer to a HEAD request through `send` (moleculer-web's own sender), which
 * would end a HEAD answer before writing it and leave a returned stream open: it is shown a GET,
 * and the length of what it writes becomes the Content-Length.
 */
export function sendAsHead(req: IncomingMessage, res: ServerResponse, data: unknown, send: (data: unknown) => void): void {
  if (data instanceof Readable) {
    send(data);
    data.destroy();
    return;
  }
  const end = res.end.bind(res) as (chunk?: unknown) => ServerResponse;
  res.end = ((chunk?: unknown) => {
    if ((typeof chunk === 'string' || Buffer.isBuffer(chunk)) && !res.headersSent && !res.hasHeader('Content-Length')) res.setHeader('Content-Length', Buffer.byteLength(chunk));
    return end(chunk);
  }) as ServerResponse['end'];
  req.method = 'GET';
  try {
    send(data);
  } finally {
    req.method = 'HEAD';
  }
}
