// A real S3 HTTP server for tests (s3rver, objects kept in a temp dir), so the S3 archive target
// is exercised through @aws-sdk/client-s3 over the wire, without an AWS account or a MinIO install.
// Clients reach it path-style (`forcePathStyle: true`), region us-east-1, with any signed
// credentials (S3RVER/S3RVER is its default account).
//
// s3rver runs in a child process started with --openssl-legacy-provider: its ListObjectsV2
// continuation tokens are DES-encrypted, and Node 24's OpenSSL 3 refuses DES without the legacy
// provider, so every truncated listing (more keys than one page) would answer 500. No client
// setting avoids it: the server builds the token whenever a page is truncated. The child also
// keeps s3rver's winston logger and its process-wide exception handlers out of the test process.
//   node --openssl-legacy-provider test/support/s3-test-server.ts <dir> <bucket>
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export interface S3TestServer {
  endpoint: string;
  bucket: string;
  /** Where s3rver keeps the bucket's objects. */
  dir: string;
  close(): Promise<void>;
}

/** s3rver's default account: it checks the signatures of requests signed with it. */
export const S3_TEST_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

const BUCKET = 'plumb-archives';

export async function startS3TestServer(): Promise<S3TestServer> {
  const dir = mkdtempSync(join(tmpdir(), 'plumb-s3rver-'));
  const child = spawn(process.execPath, ['--openssl-legacy-provider', fileURLToPath(import.meta.url), dir, BUCKET], { stdio: ['ignore', 'pipe', 'pipe'] });
  let port: number;
  try {
    port = await firstLinePort(child);
  } catch (error) {
    await stop(child);
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    endpoint: `http://127.0.0.1:${port}`,
    bucket: BUCKET,
    dir,
    async close() {
      await stop(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The port the child prints as its first line, once s3rver listens. */
function firstLinePort(child: ChildProcess): Promise<number> {
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the S3 test server printed no port within 20s: ${stderr}`)), 20_000);
    createInterface({ input: child.stdout! }).once('line', (line) => {
      clearTimeout(timer);
      resolve(Number(line));
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the S3 test server exited with ${code}: ${stderr}`));
    });
  });
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
}

interface S3rverOptions {
  address: string;
  port: number;
  silent: boolean;
  directory: string;
  configureBuckets: { name: string }[];
}
interface S3rver {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
}

if (import.meta.main) {
  const [dir, bucket] = process.argv.slice(2);
  // s3rver ships CommonJS without type declarations: loaded by require, typed here with the part
  // of its documented API this file uses.
  const S3rver = createRequire(import.meta.url)('s3rver') as new (options: S3rverOptions) => S3rver;
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: dir, configureBuckets: [{ name: bucket }] });
  const address = await server.run();
  console.log(address.port);
  const close = () => {
    void server.close().then(() => process.exit(0));
  };
  process.once('SIGTERM', close);
  process.once('SIGINT', close);
}
