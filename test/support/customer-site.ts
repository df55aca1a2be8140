// A customer's website for browser tests: a local HTTP server on its own *.localhost origin (which
// Chromium resolves to loopback) whose pages embed a Plumb instance's tracking snippet.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { freePort } from './instance.ts';

/** Desktop browsers as real visitors send them (headless Chromium's own user agent is a bot's). */
export const DESKTOP_USER_AGENTS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36',
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/129.0.0.0 Safari/537.36',
] as const;

/** The snippet the dashboard tells site owners to paste, allowed on *.localhost for the test. */
export function trackingSnippet(plumbUrl: string): string {
  return `<script>window.plumb = window.plumb || function () { (window.plumb.q = window.plumb.q || []).push(arguments) };</script>
<script defer src="${plumbUrl}/plumb.js" data-allow-localhost></script>`;
}

export interface CustomerSite {
  /** http://<name>.localhost:<port> */
  origin: string;
  hostname: string;
  close(): Promise<void>;
}

export async function serveCustomerSite(name: string, page: (req: IncomingMessage) => string): Promise<CustomerSite> {
  const port = await freePort();
  const server: Server = createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end(page(req));
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const hostname = `${name}.localhost`;
  return {
    origin: `http://${hostname}:${port}`,
    hostname,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
