// Test harness: runs a real `plumb serve` child process on a free port with its own data dir,
// and a tiny HTTP client for it. Tests talk to Plumb only through HTTP, as users do.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { contractFetch, contractOf, nativeFetch } from './contract.ts';
import { copyPgliteTemplate } from './pglite-template.ts';

export const ROOT = new URL('../../', import.meta.url).pathname;
export const NODE_BIN = process.execPath;

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** An empty data dir: a node started on it makes its stores as a real first start does. */
export function tempDataDir(prefix = 'plumb-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/**
 * A data dir whose `meta` holds a new PGlite database already (copied from a template), so the
 * node or store opening it skips initdb and its seconds of CPU; everything else is still empty.
 */
export async function tempDataDirWithPglite(prefix = 'plumb-test-'): Promise<string> {
  const dataDir = tempDataDir(prefix);
  await copyPgliteTemplate(dataDir);
  return dataDir;
}

export interface Instance {
  url: string;
  port: number;
  dataDir: string;
  child: ChildProcess;
  output(): string;
  /** SIGTERM and wait; resolves with the exit code and how long the exit took. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; ms: number }>;
  /** Removes the data dir too. */
  destroy(): Promise<void>;
}

export interface StartOptions {
  /** Default: a new one, with a PGlite database in it unless the env names a PostgreSQL. */
  dataDir?: string;
  env?: Record<string, string>;
  args?: string[];
  /** Default: a free one. Given, when the instance's public URL must name it before it starts. */
  port?: number;
  /** How long to wait for /readyz. */
  timeoutMs?: number;
}

export async function startInstance(options: StartOptions = {}): Promise<Instance> {
  const port = options.port ?? (await freePort());
  const dataDir = options.dataDir ?? (options.env?.PLUMB_DATABASE_URL ? tempDataDir() : await tempDataDirWithPglite());
  const child = spawn(NODE_BIN, [join(ROOT, 'bin/plumb.ts'), 'serve', '-port', String(port), '-host', '127.0.0.1', ...(options.args ?? [])], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, PLUMB_DATA_DIR: dataDir, PLUMB_LOG_LEVEL: 'info', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  await waitFor(
    async () => {
      if (child.exitCode !== null) throw new Error(`plumb exited with ${child.exitCode} during start:\n${output}`);
      // Unchecked: while starting, routes appear one service at a time.
      const res = await nativeFetch(`${url}/readyz`).catch(() => undefined);
      return res?.status === 200;
    },
    // A fresh data dir's first start (PGlite's initdb) takes a few seconds on a quiet machine and
    // several times that while other suites load both cores; readiness itself is measured elsewhere.
    options.timeoutMs ?? 60_000,
    () => `plumb did not become ready:\n${output}`,
  ).catch((err: unknown) => {
    // No test holds it yet, so nothing else would ever stop it.
    child.kill('SIGKILL');
    throw err;
  });
  // Read while the instance surely answers, so an answer during its shutdown can still be checked.
  await contractOf(url);
  const stop = async (signal: NodeJS.Signals = 'SIGTERM') => {
    const started = performance.now();
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    const code = await exited;
    return { code, ms: performance.now() - started };
  };
  return {
    url,
    port,
    dataDir,
    child,
    output: () => output,
    stop,
    async destroy() {
      await stop('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export async function waitFor(check: () => Promise<boolean>, timeoutMs: number, describe: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(describe());
}

/** Runs `plumb` with arguments to completion (for --help and bad-config checks). */
export function runPlumb(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(NODE_BIN, [join(ROOT, 'bin/plumb.ts'), ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, PLUMB_LOG_LEVEL: 'warn', ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.once('exit', (code) => resolve({ code, stdout, stderr, ms: performance.now() - started }));
  });
}

export interface JsonResponse {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
  text: string;
}

/**
 * fetch() that parses JSON when the response is JSON. The answer is checked against the
 * instance's OpenAPI document first (undeclared route or status, wrong content type, a body the
 * schema does not describe: the call throws), as every fetch() of the test suite is.
 */
export async function request(url: string, init: RequestInit = {}): Promise<JsonResponse> {
  const res = await contractFetch(url, init);
  const text = await res.text();
  let body: Record<string, unknown> = {};
  if ((res.headers.get('content-type') ?? '').includes('json') && text) body = JSON.parse(text);
  return { status: res.status, headers: res.headers, body, text };
}
