// GET /metrics: on the HTTP port behind a bearer token (-metrics-token), or on a listener of its
// own (-metrics-address) that answers nothing else and asks for no token, for a private interface.
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { PlumbError } from '../errors.ts';
import { sendError } from '../http/error-response.ts';
import type { Log } from '../log.ts';
import type { NodeMetrics } from './metrics.ts';

export const METRICS_PATH = '/metrics';

export async function sendMetrics(metrics: NodeMetrics, res: ServerResponse): Promise<void> {
  const { contentType, body } = await metrics.scrape();
  res.writeHead(200, { 'Content-Type': contentType, 'Cache-Control': 'no-store', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

/** `Authorization: Bearer <token>`, compared in constant time (digests, so the lengths never differ). */
export function bearerMatches(req: IncomingMessage, token: string): boolean {
  const header = req.headers.authorization ?? '';
  const given = header.startsWith('Bearer ') ? header.slice('Bearer '.length) : '';
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return given.length > 0 && timingSafeEqual(digest(given), digest(token));
}

/** The separate listener; resolves once it listens, with the server to close at shutdown. */
export async function startMetricsListener(address: string, metrics: NodeMetrics, log: Log): Promise<Server> {
  const colon = address.lastIndexOf(':');
  const host = address.slice(0, colon).replace(/^\[|\]$/g, '');
  const port = Number(address.slice(colon + 1));
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== METRICS_PATH || req.method !== 'GET') {
      sendError(log, req, res, new PlumbError(404, 'not_found', `Only GET ${METRICS_PATH} is served here`));
      return;
    }
    sendMetrics(metrics, res).catch((err: Error) => sendError(log, req, res, err));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  log.info({ address }, `metrics at http://${address}${METRICS_PATH}`);
  return server;
}
