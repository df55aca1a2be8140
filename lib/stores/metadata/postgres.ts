// PostgreSQL transport (node-postgres pool) for cluster mode, where every node shares one database.
import pg from 'pg';
import type { PoolClient, QueryResult as PgQueryResult } from 'pg';
import type { Log } from '../../log.ts';
import type { MetadataScriptable, MetadataConnection, MetadataTransport, QueryResult } from './index.ts';

export interface PostgresOptions {
  url: string;
  log: Log;
}

const INT8 = 20;
const INT4_ARRAY = 1007;
const INT8_ARRAY = 1016;

/**
 * PGlite reads bigint (count(*), epochs) as JS numbers; pg reads them as strings. Numbers on both,
 * so code never branches on the transport. Values beyond 2^53 are not used by the schema.
 */
const builtinParser = pg.types.getTypeParser as (oid: number, format?: 'text' | 'binary') => (value: string) => unknown;
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    if (oid === INT8) return Number;
    // The int4[] parser yields numbers element by element, NULL as null.
    if (oid === INT8_ARRAY) return builtinParser(INT4_ARRAY, 'text');
    return builtinParser(oid, format);
  }) as typeof pg.types.getTypeParser,
};

export async function openPostgres(options: PostgresOptions): Promise<MetadataTransport> {
  const { log } = options;
  const where = describeUrl(options.url);
  const pool = new pg.Pool({
    connectionString: options.url,
    max: 10,
    connectionTimeoutMillis: 5000,
    idleTimeoutMillis: 30000,
    types,
  });
  // An idle client losing its server (restart, failover) is reported here; unhandled, it would
  // crash the process. The pool drops that client and opens a new one on demand.
  pool.on('error', (err) => log.error({ err, database: where }, 'metadata store: idle PostgreSQL connection failed'));
  try {
    await pool.query('SELECT 1');
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw new Error(`metadata store: cannot reach PostgreSQL at ${where}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  log.info({ database: where }, 'metadata store: PostgreSQL connected');

  let closed = false;
  return {
    kind: 'postgres',
    query: async <T>(sql: string, params?: unknown[]) => toResult<T>(await pool.query(sql, params)),
    transaction: (fn) => withClient(pool, log, (client) => inTransaction(client, fn), false),
    // A connection whose work failed may still hold its advisory lock, so it is never reused.
    withConnection: (fn) => withClient(pool, log, (client) => fn(connectionOn(client)), true),
    close: async () => {
      if (closed) return;
      closed = true;
      await pool.end();
    },
  };
}

/** Clients whose ROLLBACK failed: their state is unknown, so they are destroyed rather than pooled. */
const broken = new WeakSet<PoolClient>();

/** Checks a client out for fn and gives it back, destroying it when it can no longer be trusted. */
async function withClient<T>(pool: pg.Pool, log: Log, fn: (client: PoolClient) => Promise<T>, destroyOnError: boolean): Promise<T> {
  const client = await pool.connect();
  // A checked-out client has no pool listener; without ours a dropped connection would crash.
  const onError = (err: Error) => log.error({ err }, 'metadata store: PostgreSQL connection failed during use');
  client.on('error', onError);
  let failure: Error | undefined;
  try {
    return await fn(client);
  } catch (err) {
    if (destroyOnError || broken.has(client)) failure = err instanceof Error ? err : new Error(String(err));
    throw err;
  } finally {
    client.off('error', onError);
    client.release(failure);
  }
}

async function inTransaction<T>(client: PoolClient, fn: (tx: MetadataScriptable) => Promise<T>): Promise<T> {
  let finished = false;
  const tx = scriptable(client, () => {
    if (finished) throw new Error('transaction is closed');
  });
  await client.query('BEGIN');
  let result: T;
  try {
    result = await fn(tx);
  } catch (err) {
    finished = true;
    // The caller needs fn's error, not the rollback's; a failed ROLLBACK retires the connection.
    await client.query('ROLLBACK').catch(() => broken.add(client));
    throw err;
  }
  finished = true;
  const commit = await client.query('COMMIT');
  // PostgreSQL answers COMMIT of a failed transaction with ROLLBACK instead of an error; PGlite
  // throws. Throw here too so a swallowed statement error never passes for a commit.
  if (commit.command === 'ROLLBACK') throw new Error('transaction was rolled back: a statement in it failed');
  return result;
}

function connectionOn(client: PoolClient): MetadataConnection {
  return { ...scriptable(client), transaction: (fn) => inTransaction(client, fn) };
}

function scriptable(client: PoolClient, check: () => void = () => undefined): MetadataScriptable {
  return {
    query: async <T>(sql: string, params?: unknown[]) => {
      check();
      return toResult<T>(await client.query(sql, params));
    },
    exec: async (script: string) => {
      check();
      // Without params pg uses the simple protocol, which runs a multi-statement script.
      await client.query(script);
    },
  };
}

function toResult<T>(result: PgQueryResult): QueryResult<T> {
  return { rows: result.rows as T[], rowCount: result.rowCount ?? 0 };
}

/** host:port/database for logs and errors, never the credentials. */
function describeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || '5432'}${u.pathname}`;
  } catch {
    return 'the configured database URL';
  }
}
