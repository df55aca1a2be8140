// PGlite transport: embedded PostgreSQL (wasm) with its files in <dataDir>/meta, for single-node
// Plumb. One connection, so every call is queued and a transaction holds the queue until it ends.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { PGlite, type Results, type Transaction } from '@electric-sql/pglite';
import { closeToOthers } from '../../data-dir-lock.ts';
import type { Log } from '../../log.ts';
import type { MetadataScriptable, MetadataConnection, MetadataTransport, QueryResult } from './index.ts';

export interface PgliteOptions {
  dataDir: string;
  log: Log;
}

/**
 * PostgreSQL's wasm is compiled by V8's baseline compiler (Liftoff) alone. By default V8 also
 * recompiles the hot part of it with its optimising compiler in the background, and that took the
 * process from 290 to 900 MiB (VmHWM) in the first seconds of use and left +60 MiB behind; with
 * Liftoff alone the peak stays at 317 MiB, and metadata queries on a 2-core box ran no slower
 * (2,000 lookups: 1.6–2.2 s against 2.9–5.2 s while the optimiser competed for the cores). V8 reads
 * these flags when a module is compiled, so they are set before the first PGlite is created.
 */
const WASM_FLAGS = ['--liftoff-only', '--no-wasm-tier-up', '--no-wasm-dynamic-tiering'];
setFlagsFromString(WASM_FLAGS.join(' '));

/**
 * Plumb's metadata is megabytes, read through the kernel's page cache; PostgreSQL's default 128 MB
 * of shared buffers sat in the wasm memory all the same (a node's metadata store: 236 MiB resident
 * with them, 118 with 16 MB, and 2,000 lookups took as long). 8 MB took another 8 MiB off an
 * idle node (the wasm memory resident 30.5 → 22.5 MiB), and 2 MB another 6 (→ 15.9), with 5,000
 * lookups among 2,000 sites no slower (2.3–2.4 s against 2.5–2.7).
 */
const SERVER_SETTINGS = ['-c', 'shared_buffers=2MB'];

const INITDB = new URL('./pglite-initdb.ts', import.meta.url).pathname;

/**
 * A new database is made by a child process: PGlite's initdb took a node's first start to a
 * 589 MiB peak of its own (its own wasm, then the server's), which the node would keep as its
 * high-water mark under every store and cache it opens after. In a child that exits first, the
 * node opens a database that exists (317 MiB), and the box never holds both. The child writes to a
 * directory beside `dir`, renamed into place when whole, so a start killed midway leaves no
 * half-made database behind.
 */
async function createDatabase(dataDir: string, dir: string): Promise<void> {
  const making = join(dataDir, `meta.initdb-${process.pid}`);
  await rm(making, { recursive: true, force: true });
  try {
    await promisify(execFile)(process.execPath, [...WASM_FLAGS, INITDB, making], { timeout: 300_000 });
    await rm(dir, { recursive: true, force: true });
    await rename(making, dir);
  } catch (err) {
    await rm(making, { recursive: true, force: true });
    const stderr = (err as { stderr?: string }).stderr?.trim();
    throw new Error(`cannot create the PGlite database${stderr ? `: ${stderr.split('\n').at(-1)}` : ''}`, { cause: err });
  }
}

export async function openPglite(options: PgliteOptions): Promise<MetadataTransport> {
  const dir = join(options.dataDir, 'meta');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  let db: PGlite;
  try {
    if (!existsSync(join(dir, 'PG_VERSION'))) {
      // A first start, unless something else lives there: never make a database over files.
      if ((await readdir(dir)).length > 0) throw new Error(`${dir} holds files but no PostgreSQL database (no PG_VERSION); move them away or choose another data dir`);
      await createDatabase(options.dataDir, dir);
    }
    db = await PGlite.create(dir, { startParams: [...PGlite.defaultStartParams, ...SERVER_SETTINGS] });
  } catch (err) {
    throw new Error(`metadata store: cannot open PGlite in ${dir}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  // PGlite writes a new database's files world-readable (0666), past the umask.
  closeToOthers(dir);
  options.log.info({ dir }, 'metadata store: PGlite opened');
  return pgliteTransport(db);
}

function pgliteTransport(db: PGlite): MetadataTransport {
  // PGlite queues its own calls too, but only call by call. This queue is ours so a held connection
  // (migrations: lock, several transactions, unlock) keeps the connection between calls.
  const queue = new Queue();
  let closed = false;
  const whenOpen = <T>(fn: () => Promise<T>): Promise<T> =>
    queue.run(() => {
      if (closed) return Promise.reject(new Error('metadata store (pglite) is closed'));
      return fn();
    });
  const transaction = <T>(fn: (tx: MetadataScriptable) => Promise<T>) => db.transaction((tx) => fn(scriptable(tx)));
  const connection: MetadataConnection = { ...scriptable(db), transaction };

  return {
    kind: 'pglite',
    query: <T>(sql: string, params?: unknown[]) => whenOpen(() => run<T>(db, sql, params)),
    transaction: (fn) => whenOpen(() => transaction(fn)),
    withConnection: (fn) => whenOpen(() => fn(connection)),
    close: () =>
      // Queued behind work already accepted, so nothing in flight is cut off.
      queue.run(async () => {
        if (closed) return;
        closed = true;
        await db.close();
      }),
  };
}

function scriptable(conn: PGlite | Transaction): MetadataScriptable {
  return {
    query: <T>(sql: string, params?: unknown[]) => run<T>(conn, sql, params),
    exec: async (script: string) => {
      await conn.exec(script);
    },
  };
}

async function run<T>(conn: PGlite | Transaction, sql: string, params: unknown[] = []): Promise<QueryResult<T>> {
  const result: Results<T> = await conn.query<T>(sql, params.map(toParam));
  // PGlite reports affectedRows only for writes; pg's rowCount also counts the rows a SELECT returned.
  return { rows: result.rows, rowCount: Math.max(result.affectedRows ?? 0, result.rows.length) };
}

/**
 * Prepares a bound value the way node-postgres does, so one call means the same on both
 * transports: PGlite would otherwise send a JS array to a `text[]` parameter as "a,b" and an
 * object to a `text` parameter as "[object Object]".
 */
function toParam(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (value instanceof Uint8Array) return value;
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return arrayLiteral(value);
  if (typeof value === 'object') return JSON.stringify(value);
  return value;
}

function arrayLiteral(items: unknown[]): string {
  const parts = items.map((item) => {
    if (item === null || item === undefined) return 'NULL';
    if (Array.isArray(item)) return arrayLiteral(item);
    const prepared = item instanceof Uint8Array ? `\\x${Buffer.from(item).toString('hex')}` : String(toParam(item));
    return `"${prepared.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
  });
  return `{${parts.join(',')}}`;
}

/** A FIFO of async jobs, one at a time; a failed job does not stop the ones behind it. */
class Queue {
  #tail: Promise<unknown> = Promise.resolve();

  run<T>(job: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(job);
    this.#tail = result.catch(() => undefined);
    return result;
  }
}
