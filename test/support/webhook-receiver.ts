// Webhook receivers for tests: real HTTP(S) servers on 127.0.0.1 that record every request with
// its raw body bytes and answer as the test tells them; plus a throwaway CA and server certificate
// made with the openssl CLI, and signature checking written from the documented rules alone.
import { execFileSync } from 'node:child_process';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from './instance.ts';

export interface Received {
  path: string;
  method: string;
  headers: IncomingHttpHeaders;
  /** The body exactly as it arrived. */
  raw: Buffer;
  /** When the request arrived and when its answer was finished (ms since the epoch). */
  at: number;
  answeredAt?: number;
}

/** How to answer one request: a status, or anything written by hand (e.g. never answering). */
export type Responder = (req: IncomingMessage, res: ServerResponse, received: Received) => void;

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** Requests to this path (newest last). */
  at(path: string): Received[];
  /** Answers requests to `path` with this from now on (default: 204). */
  respond(path: string, responder: Responder | number): void;
  /** Waits until `count` requests to `path` have arrived. */
  waitFor(path: string, count: number, timeoutMs?: number): Promise<Received[]>;
  /** Requests being handled right now (arrived, not yet answered) and the most there ever were at once. */
  concurrency(): { now: number; max: number };
  close(): Promise<void>;
}

export interface ReceiverOptions {
  tls?: { key: string; cert: string };
}

export async function startReceiver(options: ReceiverOptions = {}): Promise<Receiver> {
  const received: Received[] = [];
  const responders = new Map<string, Responder>();
  let open = 0;
  let maxOpen = 0;
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const entry: Received = { path: req.url ?? '', method: req.method ?? '', headers: req.headers, raw: Buffer.concat(chunks), at: Date.now() };
      received.push(entry);
      open++;
      maxOpen = Math.max(maxOpen, open);
      let counted = true;
      const done = () => {
        if (!counted) return;
        counted = false;
        open--;
        entry.answeredAt = Date.now();
      };
      res.on('finish', done);
      res.on('close', done);
      const responder = responders.get(entry.path) ?? ((_q: IncomingMessage, s: ServerResponse) => s.writeHead(204).end());
      responder(req, res, entry);
    });
  };
  const server: Server = options.tls ? createHttpsServer(options.tls, handler) : createHttpServer(handler);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as { port: number }).port;
  const at = (path: string) => received.filter((r) => r.path === path);
  return {
    url: `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    port,
    received,
    at,
    respond(path, responder) {
      responders.set(path, typeof responder === 'number' ? (_q, s) => s.writeHead(responder, { 'Content-Type': 'text/plain' }).end('answer') : responder);
    },
    async waitFor(path, count, timeoutMs = 15_000) {
      await waitFor(async () => at(path).length >= count, timeoutMs, () => `expected ${count} requests to ${path}, got ${at(path).length}`);
      return at(path);
    },
    concurrency: () => ({ now: open, max: maxOpen }),
    async close() {
      server.closeAllConnections();
      server.close();
    },
  };
}

/** A CA and a server certificate it signed for `names` (DNS) and 127.0.0.1, via the openssl CLI. */
export function testCertificates(names: string[]): { ca: string; key: string; cert: string } {
  const dir = mkdtempSync(join(tmpdir(), 'plumb-ca-'));
  const run = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  try {
    run('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '1', '-subj', '/CN=Plumb test CA');
    run('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', `/CN=${names[0]}`);
    writeFileSync(join(dir, 'san.ext'), `subjectAltName=${[...names.map((n) => `DNS:${n}`), 'IP:127.0.0.1'].join(',')}\n`);
    run('x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.pem', '-days', '1', '-extfile', 'san.ext');
    const read = (file: string) => readFileSync(join(dir, file), 'utf8');
    return { ca: read('ca.pem'), key: read('server.key'), cert: read('server.pem') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The receiver's side of the documented signature rules: message = timestamp text + "." + the exact
 * body bytes; key = the signing secret; `v1=` + hex HMAC-SHA256; compared in constant time.
 */
export function verifySignature(secret: string, received: Received): boolean {
  const timestamp = received.headers['x-plumb-timestamp'];
  const header = received.headers['x-plumb-signature'];
  if (typeof timestamp !== 'string' || typeof header !== 'string' || !/^\d+$/.test(timestamp)) return false;
  const expected = Buffer.from(`v1=${createHmac('sha256', Buffer.from(secret, 'utf8')).update(Buffer.concat([Buffer.from(`${timestamp}.`, 'utf8'), received.raw])).digest('hex')}`);
  const given = Buffer.from(header);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
