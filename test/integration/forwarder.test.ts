// `plumb forward-ai-fetches` against a real node: log files written here, the AI crawlers' lines
// sent and stored, a restart and a rotation followed with nothing lost or doubled, a resend after a
// crash answered from its Idempotency-Key, a failing server retried (and given up on with --once),
// a batch too large split, per-item refusals told apart, and every log format read.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ForwarderOptions, forwardAiFetches } from '../../lib/forwarder/forwarder.ts';
import { ServerUnavailable } from '../../lib/forwarder/sender.ts';
import { startHoldingProxy } from '../support/holding-proxy.ts';
import { ROOT, request, waitFor } from '../support/instance.ts';
import { startTestNode, type TestNode } from '../support/node.ts';

const GPTBOT = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)';
const CLAUDEBOT = 'Mozilla/5.0 (compatible; ClaudeBot/1.0; +claudebot@anthropic.com)';
const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';
const KIMI = 'Mozilla/5.0 (compatible; Kimi-User/1.0)';

let t: TestNode;
let token: string;
let dir: string;
let files = 0;

/** A line of nginx's combined format, as nginx writes it. */
const nginx = (path: string, userAgent = GPTBOT, status = 200) =>
  `203.0.113.7 - - [10/Jan/2026:11:30:05 +0000] "GET ${path} HTTP/1.1" ${status} 5120 "-" "${userAgent}"\n`;

const newLog = (text = '') => {
  const path = join(dir, `access-${++files}.log`);
  writeFileSync(path, text);
  return path;
};

function forward(logs: string[], extra: Partial<ForwarderOptions> = {}) {
  const reports: string[] = [];
  const run = forwardAiFetches({ url: t.url, siteId: t.site.id, token, format: 'nginx', logs, once: true, backoffBaseMs: 10, report: (line) => reports.push(line), ...extra });
  return { run, reports };
}
const forwardOnce = async (logs: string[], extra: Partial<ForwarderOptions> = {}) => forward(logs, extra).run;

/**
 * Sends one fetch straight to the route and waits until it is stored. Ingest stores in the order it
 * accepts, so once this marker is visible, anything the forwarder had sent would be too: a count
 * checked after this cannot pass merely because the writer is slow.
 */
async function storedThrough(marker: string) {
  const res = await request(`${t.url}/api/sites/${t.site.id}/ingest/ai-fetch`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
    body: JSON.stringify({ path: marker, status_code: 200, user_agent: GPTBOT }),
  });
  expect(res.status).toBe(202);
  await t.rows('ai_fetches', 1, 'path = {marker:String}', { marker });
}

/** The stored paths under a prefix, each as often as it was stored. */
async function storedPaths(prefix: string): Promise<string[]> {
  await storedThrough(`/marker${prefix}${Math.random()}`);
  const rows = await t.rowsNow<{ path: string }>('ai_fetches', 'startsWith(path, {prefix:String})', { prefix });
  return rows.map((row) => row.path).sort();
}

interface DoubleRequest {
  key: string;
  paths: string[];
}

interface DoubleAnswer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/**
 * A stand-in for Plumb's AI-fetch route: it records each batch (its key and its fetches' paths) and
 * answers what `answer` says, or passes the request on to the real node when that returns null.
 */
async function startServerDouble(answer: (request: DoubleRequest) => DoubleAnswer | null) {
  const requests: DoubleRequest[] = [];
  const server: Server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const body = Buffer.concat(chunks);
      const request = { key: String(req.headers['idempotency-key']), paths: (JSON.parse(body.toString()) as { items: { path: string }[] }).items.map((item) => item.path) };
      requests.push(request);
      const given = answer(request);
      if (given) {
        res.writeHead(given.status, { 'Content-Type': 'application/json', ...given.headers }).end(JSON.stringify(given.body ?? { message: 'from the double', code: 'double' }));
        return;
      }
      const headers = Object.fromEntries(['authorization', 'content-type', 'idempotency-key'].map((name) => [name, String(req.headers[name])]));
      const upstream = await fetch(`${t.url}${req.url}`, { method: req.method, headers, body });
      const replayed = upstream.headers.get('idempotent-replayed');
      res.writeHead(upstream.status, { 'Content-Type': 'application/json', ...(replayed ? { 'Idempotent-Replayed': replayed } : {}) }).end(await upstream.text());
    });
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    requests,
    close: () => new Promise((closed) => server.close(closed)),
  };
}

const savedPosition = (log: string) => JSON.parse(readFileSync(`${log}.plumb-state`, 'utf8')).logs[log];

beforeAll(async () => {
  t = await startTestNode();
  token = await t.token(['ai-fetch:write']);
  dir = mkdtempSync(join(tmpdir(), 'plumb-forwarder-'));
});

afterAll(async () => {
  await t.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('plumb forward-ai-fetches, nginx log', () => {
  it('stores the AI crawlers’ lines only, with their path, status, bytes, agent and time', async () => {
    const log = newLog(
      nginx('/only/gpt') +
        nginx('/only/visitor', FIREFOX) +
        'this is not a log line\n' +
        nginx('/only/claude', CLAUDEBOT, 404) +
        nginx('//only/refused-by-the-server', CLAUDEBOT),
    );
    const { run, reports } = forward([log]);
    expect(await run).toEqual({ lines: 5, otherAgents: 1, malformed: 1, accepted: 2, rejected: 1, replayedBatches: 0 });
    expect(reports.some((line) => line.includes('refused: path must be a path starting with /'))).toBe(true);
    const rows = await t.rows<Record<string, unknown>>('ai_fetches', 2, "startsWith(path, '/only/')");
    expect(rows.map((r) => [r.path, r.status_code, r.bytes, r.assistant_name, r.ts]).sort()).toEqual([
      ['/only/claude', 404, '5120', 'ClaudeBot', '2026-01-10 11:30:05.000'],
      ['/only/gpt', 200, '5120', 'GPTBot', '2026-01-10 11:30:05.000'],
    ]);
    expect(await storedPaths('/only/')).toEqual(['/only/claude', '/only/gpt']);
  });

  it('resumes after a restart from the last accepted line, with nothing lost or doubled', async () => {
    // The third line is being written when the first run reads: it is not a line yet.
    const log = newLog(nginx('/resume/1') + nginx('/resume/2') + nginx('/resume/3').slice(0, 40));
    expect(await forwardOnce([log])).toMatchObject({ lines: 2, accepted: 2 });
    appendFileSync(log, nginx('/resume/3').slice(40) + nginx('/resume/4', CLAUDEBOT));
    expect(await forwardOnce([log])).toMatchObject({ lines: 2, accepted: 2 });
    expect(await storedPaths('/resume/')).toEqual(['/resume/1', '/resume/2', '/resume/3', '/resume/4']);
    const state = JSON.parse(readFileSync(`${log}.plumb-state`, 'utf8'));
    expect(state.logs[log]).toEqual({ inode: String(statSync(log, { bigint: true }).ino), offset: statSync(log).size });
  });

  it('follows a rotation while running: the old file’s last lines, then the new file from its start', async () => {
    const log = newLog(nginx('/rotate-live/1'));
    const stop = new AbortController();
    const { run } = forward([log], { once: false, pollMs: 50, flushMs: 0, signal: stop.signal });
    await t.rows('ai_fetches', 1, "path = '/rotate-live/1'");
    // As logrotate and nginx do it: the file renamed, a line still written to it before nginx
    // reopens its log, then the new file at the path.
    appendFileSync(log, nginx('/rotate-live/2'));
    renameSync(log, `${log}.1`);
    appendFileSync(`${log}.1`, nginx('/rotate-live/3'));
    writeFileSync(log, nginx('/rotate-live/4') + nginx('/rotate-live/5', FIREFOX));
    await t.rows('ai_fetches', 1, "path = '/rotate-live/4'");
    appendFileSync(log, nginx('/rotate-live/6'));
    await t.rows('ai_fetches', 1, "path = '/rotate-live/6'");
    stop.abort();
    expect(await run).toMatchObject({ lines: 6, accepted: 5 });
    expect(await storedPaths('/rotate-live/')).toEqual(['/rotate-live/1', '/rotate-live/2', '/rotate-live/3', '/rotate-live/4', '/rotate-live/6']);
  });

  it('finishes a file rotated while it was stopped, found by its inode, then reads the new one', async () => {
    const log = newLog(nginx('/rotate-stopped/1'));
    await forwardOnce([log]);
    appendFileSync(log, nginx('/rotate-stopped/2'));
    renameSync(log, `${log}.1`);
    writeFileSync(log, nginx('/rotate-stopped/3'));
    expect(await forwardOnce([log])).toMatchObject({ lines: 2, accepted: 2 });
    expect(await storedPaths('/rotate-stopped/')).toEqual(['/rotate-stopped/1', '/rotate-stopped/2', '/rotate-stopped/3']);
  });

  it('reads a file truncated in place (copytruncate) again from its start', async () => {
    const log = newLog(nginx('/truncated/1') + nginx('/truncated/2'));
    await forwardOnce([log]);
    writeFileSync(log, nginx('/truncated/3'));
    expect(await forwardOnce([log])).toMatchObject({ lines: 1, accepted: 1 });
    expect(await storedPaths('/truncated/')).toEqual(['/truncated/1', '/truncated/2', '/truncated/3']);
  });

  it('stores nothing twice when the state write after an accepted batch was lost', async () => {
    const log = newLog(nginx('/crash/1') + nginx('/crash/2') + nginx('/crash/3', CLAUDEBOT));
    expect(await forwardOnce([log])).toMatchObject({ accepted: 3, replayedBatches: 0 });
    // The 202 came, the state file was never written: the same lines are sent again, with the same key.
    rmSync(`${log}.plumb-state`);
    expect(await forwardOnce([log])).toMatchObject({ accepted: 3, replayedBatches: 1 });
    expect(await storedPaths('/crash/')).toEqual(['/crash/1', '/crash/2', '/crash/3']);
  });

  it('sends the batch it was sending at a crash again as it was, though the log grew since', async () => {
    const log = newLog(nginx('/in-flight/1') + nginx('/in-flight/2'));
    await forwardOnce([log]);
    // The state as saved just before that batch was sent, and lines written while the forwarder was down.
    const { inode, offset } = JSON.parse(readFileSync(`${log}.plumb-state`, 'utf8')).logs[log];
    writeFileSync(`${log}.plumb-state`, JSON.stringify({ version: 1, logs: { [log]: { inode, offset: 0, sendingTo: offset } } }));
    appendFileSync(log, nginx('/in-flight/3'));
    expect(await forwardOnce([log])).toMatchObject({ accepted: 3, replayedBatches: 1 });
    expect(await storedPaths('/in-flight/')).toEqual(['/in-flight/1', '/in-flight/2', '/in-flight/3']);
  });

  it('records the batch it is sending before it sends it, and sends exactly that batch after a stop mid-send', async () => {
    const log = newLog(nginx('/held/1') + nginx('/held/2'));
    const proxy = await startHoldingProxy(t.url);
    proxy.holdWhen(() => true);
    const stop = new AbortController();
    try {
      const { run } = forward([log], { url: proxy.url, once: false, pollMs: 50, flushMs: 0, signal: stop.signal });
      await waitFor(async () => proxy.held.length === 1, 10_000, () => 'the batch never reached the proxy');
      const sent = statSync(log).size;
      expect(JSON.parse(readFileSync(`${log}.plumb-state`, 'utf8')).logs[log]).toMatchObject({ offset: 0, sendingTo: sent });
      stop.abort();
      expect(await run).toMatchObject({ accepted: 0 });
    } finally {
      await proxy.close();
    }
    appendFileSync(log, nginx('/held/3'));
    expect(await forwardOnce([log], { batchSize: 1 })).toMatchObject({ accepted: 3 });
    expect(await storedPaths('/held/')).toEqual(['/held/1', '/held/2', '/held/3']);
  });

  it('retries a server that answers 503 and 429, and stores the batch once it answers', async () => {
    let failures = 0;
    const answers = [
      [503, { 'Retry-After': '0' }],
      [503, {}],
      [429, { 'Retry-After': '0' }],
    ] as const;
    const proxy: Server = createServer((req, res) => {
      const failure = answers[failures];
      if (failure) {
        failures++;
        req.resume();
        res.writeHead(failure[0], { 'Content-Type': 'application/json', ...failure[1] }).end('{"message":"try later","code":"unavailable"}');
        return;
      }
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', async () => {
        const headers = Object.fromEntries(['authorization', 'content-type', 'idempotency-key'].map((name) => [name, String(req.headers[name])]));
        const upstream = await fetch(`${t.url}${req.url}`, { method: req.method, headers, body: Buffer.concat(chunks) });
        res.writeHead(upstream.status, { 'Content-Type': 'application/json' }).end(await upstream.text());
      });
    });
    await new Promise<void>((listening) => proxy.listen(0, '127.0.0.1', listening));
    try {
      const port = (proxy.address() as { port: number }).port;
      const { run, reports } = forward([newLog(nginx('/retried/1'))], { url: `http://127.0.0.1:${port}` });
      expect(await run).toMatchObject({ accepted: 1 });
      expect(failures).toBe(3);
      expect(reports.filter((line) => line.startsWith('send failed'))).toHaveLength(3);
    } finally {
      await new Promise((closed) => proxy.close(closed));
    }
    expect(await storedPaths('/retried/')).toEqual(['/retried/1']);
  });
});

describe('plumb forward-ai-fetches, a server that fails or refuses', () => {
  it('gives up with --once after its retries, keeps the position, and the next run sends the lines once', async () => {
    const down = await startServerDouble(() => ({ status: 503, body: { message: 'store unavailable', code: 'unavailable' } }));
    const log = newLog(nginx('/gave-up/1') + nginx('/gave-up/2', CLAUDEBOT));
    try {
      const { run, reports } = forward([log], { url: down.url, maxRetries: 2 });
      await expect(run).rejects.toThrow(ServerUnavailable);
      await expect(run).rejects.toThrow('gave up sending 2 fetches after 3 attempts (last: 503: store unavailable); their lines are sent again on the next run');
      expect(down.requests).toHaveLength(3);
      expect(new Set(down.requests.map((request) => request.key)).size).toBe(1);
      expect(reports.filter((line) => line.startsWith('send failed'))).toHaveLength(2);
    } finally {
      await down.close();
    }
    expect(savedPosition(log)).toEqual({ inode: String(statSync(log, { bigint: true }).ino), offset: 0, sendingTo: statSync(log).size });
    expect(await forwardOnce([log])).toMatchObject({ accepted: 2, rejected: 0 });
    expect(await storedPaths('/gave-up/')).toEqual(['/gave-up/1', '/gave-up/2']);
  });

  it('sends a batch the server finds too large (413) in halves until each fits, with nothing dropped or doubled', async () => {
    const small = await startServerDouble(({ paths }) => (paths.length > 2 ? { status: 413, body: { message: 'Request body exceeds the limit of 100 bytes', code: 'payload_too_large' } } : null));
    const log = newLog([1, 2, 3, 4, 5].map((n) => nginx(`/split/${n}`)).join('') + nginx('/split/visitor', FIREFOX));
    try {
      const { run, reports } = forward([log], { url: small.url });
      expect(await run).toMatchObject({ lines: 6, accepted: 5, rejected: 0 });
      // 5 → 3 + 2, 3 → 2 + 1: three parts stored, each under its own key.
      expect(small.requests.map((request) => request.paths.length)).toEqual([5, 3, 2, 1, 2]);
      expect(new Set(small.requests.map((request) => request.key)).size).toBe(5);
      expect(reports).toContain(`${log}: sent 5 fetches in 5 requests, 5 stored, 0 refused`);
      // The state write after the 202s lost: the same batch is split the same way, and every part answered from its key.
      rmSync(`${log}.plumb-state`);
      expect(await forwardOnce([log], { url: small.url })).toMatchObject({ accepted: 5, replayedBatches: 1 });
      expect(small.requests.slice(5).map((request) => request.key)).toEqual(small.requests.slice(0, 5).map((request) => request.key));
    } finally {
      await small.close();
    }
    expect(await storedPaths('/split/')).toEqual(['/split/1', '/split/2', '/split/3', '/split/4', '/split/5']);
  });

  it('refuses and names a single fetch still too large, and stores the rest of its batch', async () => {
    const limited = await startServerDouble(({ paths }) => (paths.includes('/huge/2') ? { status: 413, body: { message: 'Request body exceeds the limit of 100 bytes', code: 'payload_too_large' } } : null));
    const log = newLog(nginx('/huge/1') + nginx('/huge/2') + nginx('/huge/3') + nginx('/huge/4'));
    try {
      const { run, reports } = forward([log], { url: limited.url });
      expect(await run).toMatchObject({ accepted: 3, rejected: 1 });
      const second = nginx('/huge/1').length;
      expect(reports).toContain(`${log}: the server refused 1 fetches (bytes ${second}–${2 * second}) whole (413: Request body exceeds the limit of 100 bytes); skipped`);
    } finally {
      await limited.close();
    }
    expect(await storedPaths('/huge/')).toEqual(['/huge/1', '/huge/3', '/huge/4']);
  });

  it('skips the fetches refused as invalid and sends again, alone, those refused for now', async () => {
    const results = (paths: string[]) =>
      paths.map((path, index) => {
        if (path === '/per-item/invalid') return { index, status: 'rejected', code: 'validation_failed', message: 'path is not one the site serves' };
        if (path === '/per-item/later' && busy-- > 0) return { index, status: 'rejected', code: 'rate_limited', message: 'Too many requests; retry later' };
        return { index, status: 'accepted' };
      });
    let busy = 2;
    const double = await startServerDouble(({ paths }) => {
      const answered = results(paths);
      const accepted = answered.filter((result) => result.status === 'accepted').length;
      return { status: 202, body: { accepted, rejected: paths.length - accepted, results: answered } };
    });
    const log = newLog(nginx('/per-item/ok') + nginx('/per-item/invalid') + nginx('/per-item/later', KIMI));
    try {
      const { run, reports } = forward([log], { url: double.url });
      expect(await run).toMatchObject({ accepted: 2, rejected: 1 });
      expect(double.requests.map((request) => request.paths)).toEqual([['/per-item/ok', '/per-item/invalid', '/per-item/later'], ['/per-item/later'], ['/per-item/later']]);
      expect(new Set(double.requests.map((request) => request.key)).size).toBe(3);
      expect(reports).toContain(`${log}: line at byte ${nginx('/per-item/ok').length} refused: path is not one the site serves`);
      expect(reports.filter((line) => line.startsWith('send failed (1 of '))).toHaveLength(2);
    } finally {
      await double.close();
    }
  });

  it('gives up with --once on fetches the server keeps refusing for now', async () => {
    const double = await startServerDouble(({ paths }) => ({
      status: 202,
      body: { accepted: 0, rejected: paths.length, results: paths.map((_, index) => ({ index, status: 'rejected', code: 'unavailable', message: 'store unavailable' })) },
    }));
    const log = newLog(nginx('/per-item-down/1'));
    try {
      const { run } = forward([log], { url: double.url, maxRetries: 1 });
      await expect(run).rejects.toThrow('gave up sending 1 fetches after 2 attempts (last: 1 of 1 fetches refused for now (unavailable))');
      expect(double.requests).toHaveLength(2);
    } finally {
      await double.close();
    }
    expect(savedPosition(log)).toMatchObject({ offset: 0, sendingTo: statSync(log).size });
  });

  it('forwards the lines of any agent of the catalog the server knows, as the route judges them', async () => {
    const log = newLog(nginx('/catalog/kimi', KIMI) + nginx('/catalog/firefox', FIREFOX));
    expect(await forwardOnce([log])).toMatchObject({ accepted: 1, otherAgents: 1, rejected: 0 });
    const [row] = await t.rows<Record<string, unknown>>('ai_fetches', 1, "path = '/catalog/kimi'");
    expect(row).toMatchObject({ assistant_name: 'Kimi-User', assistant_family: 'Moonshot AI', assistant_category: 'assistant' });
  });
});

describe('plumb forward-ai-fetches, other formats', () => {
  it('reads Apache’s combined format with %D and the content type', async () => {
    const log = newLog(`203.0.113.7 - - [10/Jan/2026:06:30:05 -0500] "GET /apache/report.pdf HTTP/1.1" 200 48213 "-" "${GPTBOT}" 35000 "application/pdf"\n`);
    await forwardOnce([log], { format: 'apache' });
    const [row] = await t.rows<Record<string, unknown>>('ai_fetches', 1, "path = '/apache/report.pdf'");
    expect(row).toMatchObject({ ts: '2026-01-10 11:30:05.000', response_time_ms: 35, content_type: 'application/pdf', resource_type: 'document' });
  });

  it('reads Caddy’s JSON access log', async () => {
    const entry = (uri: string, userAgent: string) =>
      `${JSON.stringify({ level: 'info', ts: 1768044605.5, logger: 'http.log.access', msg: 'handled request', request: { uri, headers: { 'User-Agent': [userAgent] } }, duration: 0.021, size: 900, status: 200, resp_headers: { 'Content-Type': ['text/html'] } })}\n`;
    const log = newLog(entry('/caddy/page', CLAUDEBOT) + entry('/caddy/visitor', FIREFOX));
    expect(await forwardOnce([log], { format: 'caddy' })).toMatchObject({ lines: 2, otherAgents: 1, accepted: 1 });
    const [row] = await t.rows<Record<string, unknown>>('ai_fetches', 1, "path = '/caddy/page'");
    expect(row).toMatchObject({ ts: '2026-01-10 11:30:05.500', response_time_ms: 21, bytes: '900', assistant_name: 'ClaudeBot' });
  });

  it('reads a CloudFront standard log, its columns named by the #Fields header', async () => {
    const log = newLog(
      '#Version: 1.0\n#Fields: date time sc-bytes cs-uri-stem sc-status cs(User-Agent) time-taken sc-content-type\n' +
        '2026-01-10\t11:30:05\t2048\t/cloudfront/guide\t200\tMozilla/5.0%20(compatible;%20PerplexityBot/1.0)\t0.012\ttext/html\n',
    );
    await forwardOnce([log], { format: 'cloudfront' });
    const [row] = await t.rows<Record<string, unknown>>('ai_fetches', 1, "path = '/cloudfront/guide'");
    expect(row).toMatchObject({ user_agent: 'Mozilla/5.0 (compatible; PerplexityBot/1.0)', assistant_name: 'PerplexityBot', response_time_ms: 12, bytes: '2048' });
  });

  it('reads JSON lines in Plumb’s field names', async () => {
    const log = newLog(`${JSON.stringify({ path: '/jsonl/doc', status_code: 200, user_agent: GPTBOT, timestamp: '2026-01-10T11:30:05Z', bytes: 77 })}\n`);
    await forwardOnce([log], { format: 'jsonl' });
    const [row] = await t.rows<Record<string, unknown>>('ai_fetches', 1, "path = '/jsonl/doc'");
    expect(row).toMatchObject({ bytes: '77', assistant_name: 'GPTBot' });
  });
});

describe('the plumb forward-ai-fetches command', () => {
  function plumb(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
    return new Promise((done) => {
      const child = spawn(process.execPath, [join(ROOT, 'bin/plumb.ts'), ...args], { env: { PATH: process.env.PATH ?? '', ...env } });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
      child.on('close', (code) => done({ code, stdout, stderr }));
    });
  }

  it('prints its usage for --help', async () => {
    const { code, stdout } = await plumb(['forward-ai-fetches', '--help']);
    expect(code).toBe(0);
    expect(stdout).toContain('Usage: plumb forward-ai-fetches --url <plumb url> --site <site id> --format <format> [flags] <log>...');
  });

  it('forwards a log once with the token from --token-file, and exits 0', async () => {
    const tokenFile = join(dir, 'token');
    writeFileSync(tokenFile, `${token}\n`);
    const log = newLog(nginx('/cli/1') + nginx('/cli/visitor', FIREFOX));
    const result = await plumb(['forward-ai-fetches', '--url', t.url, '--site', t.site.id, '--token-file', tokenFile, '--format=nginx', '--once', log]);
    expect([result.code, result.stderr]).toEqual([0, expect.stringContaining('2 lines read: 1 AI fetches stored, 0 refused, 1 other agents, 0 unreadable')]);
    expect(await storedPaths('/cli/')).toEqual(['/cli/1']);
  });

  it('stops with status 1 and says why when the server refuses the token', async () => {
    const log = newLog(nginx('/cli/refused-token'));
    const result = await plumb(['forward-ai-fetches', '--url', t.url, '--site', t.site.id, '--format', 'nginx', '--once', log], { PLUMB_FORWARD_TOKEN: 'plumb_not-a-real-token' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('the server refused the token (401');
  });

  it('exits 3 and says so when --once gives up on an unreachable server, its position kept', async () => {
    const log = newLog(nginx('/cli/unreachable'));
    // A port just given up: nothing listens on it.
    const closed = createServer();
    await new Promise<void>((listening) => closed.listen(0, '127.0.0.1', listening));
    const port = (closed.address() as { port: number }).port;
    await new Promise((done) => closed.close(done));
    const result = await plumb(['forward-ai-fetches', '--url', `http://127.0.0.1:${port}`, '--site', t.site.id, '--format', 'nginx', '--once', '--retries', '1', log], { PLUMB_FORWARD_TOKEN: token });
    expect([result.code, result.stderr]).toEqual([3, expect.stringContaining(`gave up sending 1 fetches after 2 attempts (last: fetch failed (connect ECONNREFUSED 127.0.0.1:${port})); their lines are sent again on the next run`)]);
    expect(savedPosition(log)).toMatchObject({ offset: 0, sendingTo: statSync(log).size });
  });

  it.each([
    ['no --site', ['--url', 'http://127.0.0.1:1', '--format', 'nginx', 'x.log'], '--site must be the site’s id (a UUID)'],
    ['an unknown format', ['--url', 'http://127.0.0.1:1', '--site', '00000000-0000-4000-8000-000000000000', '--format', 'iis', 'x.log'], '--format must be one of nginx, apache, caddy, cloudfront, jsonl'],
    ['no token', ['--url', 'http://127.0.0.1:1', '--site', '00000000-0000-4000-8000-000000000000', '--format', 'nginx', 'x.log'], 'give the API-client token in --token-file or PLUMB_FORWARD_TOKEN'],
    ['a --retries out of range', ['--url', 'http://127.0.0.1:1', '--site', '00000000-0000-4000-8000-000000000000', '--format', 'nginx', '--retries', '-1', 'x.log'], '--retries must be a whole number from 0 to 1000'],
  ])('refuses %s with status 2', async (_name, args, message) => {
    const result = await plumb(['forward-ai-fetches', ...args]);
    expect([result.code, result.stderr]).toEqual([2, expect.stringContaining(message)]);
  });
});
