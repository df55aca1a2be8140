// An HTTP proxy in front of a real server that can leave chosen requests unanswered, as a stalled
// upload or a slow query would be, so a test can catch a client midway at a known request (and
// kill it there) without any hook in the client.
import { createServer, type IncomingMessage, request as httpRequest, type Server } from 'node:http';

export interface HoldingProxy {
  /** The proxy's base URL (http://127.0.0.1:<port>), to give the client instead of the server's. */
  readonly url: string;
  /** From now on, requests the predicate accepts are held; `null` forwards everything again. */
  holdWhen(predicate: ((req: IncomingMessage) => boolean) | null): void;
  /** The requests held so far; they are never answered. */
  readonly held: IncomingMessage[];
  close(): Promise<void>;
}

export async function startHoldingProxy(upstream: string): Promise<HoldingProxy> {
  const target = new URL(upstream);
  let hold: ((req: IncomingMessage) => boolean) | null = null;
  const held: IncomingMessage[] = [];
  const server: Server = createServer((req, res) => {
    if (hold?.(req)) {
      held.push(req);
      return;
    }
    const forwarded = httpRequest({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    forwarded.on('error', () => res.destroy());
    req.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return {
    url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`,
    holdWhen(predicate) {
      hold = predicate;
    },
    held,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
