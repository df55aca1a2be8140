// Serves the built dashboard (dist/web), tracking script and web-vitals add-on (dist/tracker) from
// memory, gzip precomputed once at start, with ETags; dashboard URLs fall back to the SPA shell.
// Every dashboard answer carries the dashboard's security headers; a share page may name the
// sites allowed to frame it.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, relative } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Log } from '../log.ts';
import { setDashboardSecurityHeaders, setTrackerSecurityHeaders } from './security-headers.ts';

const DIST = new URL('../../dist/', import.meta.url).pathname;

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.txt': 'text/plain; charset=utf-8',
  '.webmanifest': 'application/manifest+json',
};
/** A share link's page: the SPA shell at /share/{token}. */
const SHARE_PAGE = /^\/share\/([^/]+)\/?$/;

const COMPRESSIBLE = new Set(['.html', '.js', '.css', '.json', '.svg', '.txt', '.webmanifest']);

interface Asset {
  body: Buffer;
  gzip?: Buffer;
  etag: string;
  type: string;
  cacheControl: string;
}

export interface StaticAssets {
  /** Serves a dashboard file or the SPA shell; false when the request is not the dashboard's. */
  sendDashboard(req: IncomingMessage, res: ServerResponse): boolean;
  sendTracker(req: IncomingMessage, res: ServerResponse): void;
  sendVitals(req: IncomingMessage, res: ServerResponse): void;
}

function toAsset(body: Buffer, ext: string, cacheControl: string): Asset {
  return {
    body,
    gzip: COMPRESSIBLE.has(ext) && body.length > 256 ? gzipSync(body, { level: 9 }) : undefined,
    etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
    type: TYPES[ext] ?? 'application/octet-stream',
    cacheControl,
  };
}

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : [path];
  });
}

export interface StaticAssetsOptions {
  distDir?: string;
  /** The origins allowed to frame the share page of a token (none when it may not be framed). */
  shareEmbedders?: (token: string) => Promise<readonly string[]>;
}

export function loadStaticAssets(log: Log, options: StaticAssetsOptions = {}): StaticAssets {
  const distDir = options.distDir ?? DIST;
  const dashboard = new Map<string, Asset>();
  const webDir = join(distDir, 'web');
  if (existsSync(webDir)) {
    for (const file of walk(webDir)) {
      const urlPath = `/${relative(webDir, file)}`;
      // Vite's content-hashed files never change; everything else must be revalidated.
      const cache = urlPath.startsWith('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache';
      dashboard.set(urlPath, toAsset(readFileSync(file), extname(file), cache));
    }
  } else {
    log.warn({ dir: webDir }, 'dashboard is not built (run npm run build)');
  }
  const tracker = loadScript(log, join(distDir, 'tracker', 'plumb.js'));
  const vitals = loadScript(log, join(distDir, 'tracker', 'plumb-vitals.js'));
  const shell = dashboard.get('/index.html');

  return {
    sendDashboard(req, res) {
      if (req.method !== 'GET' && req.method !== 'HEAD') return false;
      const path = decodePath(req.url ?? '/');
      if (path === undefined || path.startsWith('/api/') || path === '/index.html') return false;
      const file = dashboard.get(path);
      if (file) {
        send(req, res, file);
        return true;
      }
      // Client-side routes (/login, /sites/…) get the shell; missing files with an extension do not.
      const wantsHtml = (req.headers.accept ?? '').includes('text/html');
      if (shell && wantsHtml && extname(path) === '') {
        const share = SHARE_PAGE.exec(path);
        if (share && options.shareEmbedders) sendSharePage(req, res, shell, options.shareEmbedders(share[1]), log);
        else send(req, res, shell);
        return true;
      }
      return false;
    },
    sendTracker(req, res) {
      sendScript(req, res, tracker);
    },
    sendVitals(req, res) {
      sendScript(req, res, vitals);
    },
  };
}

/** A tracker script: pages embed its URL unversioned, so caches revalidate it hourly. */
function loadScript(log: Log, file: string): Asset | undefined {
  if (existsSync(file)) return toAsset(readFileSync(file), '.js', 'public, max-age=3600, must-revalidate');
  log.warn({ file }, 'tracking script is not built (run npm run build)');
  return undefined;
}

function sendScript(req: IncomingMessage, res: ServerResponse, script: Asset | undefined) {
  setTrackerSecurityHeaders(res);
  if (!script) {
    res.writeHead(503, { 'Content-Type': 'application/json; charset=utf-8' });
    res.end(JSON.stringify({ message: 'The tracking script is not built; run npm run build', code: 'unavailable' }));
    return;
  }
  send(req, res, script, false);
}

/** The shell of a share page, framable by the origins its link lists; by none when the look-up fails. */
function sendSharePage(req: IncomingMessage, res: ServerResponse, shell: Asset, embedders: Promise<readonly string[]>, log: Log) {
  embedders.then(
    (origins) => send(req, res, shell, true, origins),
    (err: unknown) => {
      log.warn({ err }, 'share page: reading who may embed it failed; it may not be framed');
      send(req, res, shell);
    },
  );
}

function decodePath(url: string): string | undefined {
  try {
    return decodeURIComponent(url.split('?')[0]);
  } catch {
    return undefined;
  }
}

function send(req: IncomingMessage, res: ServerResponse, asset: Asset, dashboard = true, embedders: readonly string[] = []) {
  if (dashboard) setDashboardSecurityHeaders(res, embedders);
  res.setHeader('ETag', asset.etag);
  res.setHeader('Cache-Control', asset.cacheControl);
  res.setHeader('Content-Type', asset.type);
  res.setHeader('Vary', 'Accept-Encoding');
  if (req.headers['if-none-match'] === asset.etag) {
    res.writeHead(304);
    res.end();
    return;
  }
  const useGzip = asset.gzip !== undefined && /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
  const body = useGzip ? asset.gzip! : asset.body;
  if (useGzip) res.setHeader('Content-Encoding', 'gzip');
  res.setHeader('Content-Length', body.length);
  res.writeHead(200);
  res.end(req.method === 'HEAD' ? undefined : body);
}
