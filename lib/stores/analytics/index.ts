// The analytics store: hits, events, web vitals and AI fetches in one ClickHouse database per
// team. One SQL dialect (ClickHouse) on two transports: chDB in <dataDir>/analytics by default,
// a ClickHouse server over HTTP when a URL is given. The transport hides only the wire.
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Log } from '../../log.ts';
import { loadMigrations, type Migration, migrateTenant } from './migrations.ts';
import { assertIdentifier, type EncodedLine, encodeCompactRow, encodeRow, normalizeParams, type Params, type RowFormat, type Transport, tenantDatabase } from './transport.ts';

export type { EncodedLine, LineBytes, Params, RowFormat } from './transport.ts';
export { AnalyticsStoreError, tenantDatabase } from './transport.ts';

export interface InsertOptions {
  /** Database of the table; unqualified (the connection's current database) when absent. */
  database?: string;
  /**
   * Inserting the same token again into the same table stores nothing: a replayed batch is kept
   * once. Without a token every insert is stored, even a byte-identical one.
   */
  dedupToken?: string;
  /**
   * For insertLines: the lines are JSONCompactEachRow (encodeCompactRow with these columns), not
   * JSONEachRow. Names must match /^[a-z_][a-z0-9_]*$/.
   */
  columns?: readonly string[];
}

export interface AnalyticsStore {
  readonly kind: 'chdb' | 'clickhouse';
  /**
   * Rows as JSONEachRow objects. Values are bound as `{name:Type}` parameters, never spliced
   * (`{db:Identifier}` for a database or table). 64-bit integers come back as strings,
   * DateTime64 as 'YYYY-MM-DD hh:mm:ss.sss' UTC text.
   */
  query<T = Record<string, unknown>>(sql: string, params?: Params): Promise<T[]>;
  /** Rows as they are produced, one block in memory at a time; for exports. Break to cancel. */
  stream<T = Record<string, unknown>>(sql: string, params?: Params): AsyncIterable<T>;
  /**
   * The rows of `sql` as ClickHouse writes them in `format` (CSV without a header, JSONEachRow),
   * passed on as produced without being parsed; for exports. Break to cancel.
   */
  streamBytes(sql: string, params: Params, format: RowFormat): AsyncIterable<Uint8Array>;
  /** DDL and statements without a result. */
  command(sql: string, params?: Params): Promise<void>;
  /** One batch insert (JSONEachRow, or JSONCompactEachRow with `options.columns`). Table and database names must match /^[a-z_][a-z0-9_]*$/. */
  insert(table: string, rows: readonly Record<string, unknown>[], options?: InsertOptions): Promise<void>;
  /**
   * The same insert for rows already encoded, each by encodeRow, or by encodeCompactRow with
   * `options.columns` (the ingest journal keeps them so, as text or as bytes).
   */
  insertLines(table: string, lines: readonly EncodedLine[], options?: InsertOptions): Promise<void>;
  /**
   * Writes the rows of `sql` as one Parquet file at `filePath` on this machine (ClickHouse's own
   * writer; the rows never pass through JS). Parameters here may be strings and numbers only.
   */
  exportParquet(sql: string, params: Params, filePath: string): Promise<void>;
  /** Inserts a Parquet file this store wrote from a table with the same columns. */
  importParquet(table: string, filePath: string, options: { database: string }): Promise<void>;
  /**
   * Gives the engine's freed memory back to the system. The embedded engine's allocator keeps what
   * a large read freed (a takeout's first read of each table grew the node by 60–120 MiB and kept
   * it); a ClickHouse server's memory is its own, so there it does nothing.
   */
  releaseMemory(): Promise<void>;
  /** 'tenant_' + the team's UUID in lower-case hex without dashes; throws on a non-UUID. */
  tenantDatabase(teamId: string): string;
  /** Creates the team's database and applies pending tenant migrations; returns its name. */
  ensureTenant(teamId: string): Promise<string>;
  ping(): Promise<void>;
  /** Idempotent; waits for the engine to let go of the data dir. */
  close(): Promise<void>;
}

export interface OpenAnalyticsStoreOptions {
  dataDir: string;
  clickhouseUrl?: string;
  /** What one read may use, in bytes (see readMemorySettings); unset, the engine's own limit. */
  readMemoryBytes?: number;
  log: Log;
}

export async function openAnalyticsStore(options: OpenAnalyticsStoreOptions): Promise<AnalyticsStore> {
  // Each engine's library is loaded only by a node that uses it: libchdb alone puts ~155 MiB in
  // the process the moment it is loaded, which a node on a ClickHouse server never needs.
  const transport = options.clickhouseUrl
    ? await (await import('./clickhouse.ts')).ClickHouseTransport.open(options.clickhouseUrl, options.log, options.readMemoryBytes)
    : await (await import('./chdb.ts')).ChdbTransport.open(join(options.dataDir, 'analytics'), options.log, options.readMemoryBytes);
  return new Store(transport, loadMigrations(), options.log);
}

/** Rows converted to UTF-8 between two turns of the event loop. */
const BODY_SLICE_ROWS = 1000;

/** The largest body buffer a store keeps for its next insert; a larger one is left to the collector. */
const KEPT_BODY_BYTES = 16 * 1024 * 1024;

/**
 * The lines as one body (a row a line), written into `buffer` (or a bigger one, which is
 * returned) a slice at a time with a turn of the event loop in between: the 6,600 visit rows of
 * an ingest batch converted at once held the loop for ~6–9 ms. Each line is written straight into
 * the buffer, which the store keeps for its next insert: joining a slice's lines first made a
 * string of ~0.5 MB, which V8 allocates in its old generation, and a new buffer every time; under
 * full ingest, both counted towards the next full collection.
 */
async function linesBody(lines: readonly EncodedLine[], buffer: Buffer): Promise<{ body: Buffer; buffer: Buffer }> {
  let at = 0;
  for (let i = 0; i < lines.length; i++) {
    if (i > 0 && i % BODY_SLICE_ROWS === 0) await nextTurn();
    const line = lines[i];
    // Room for the line's bytes (for text, the most it can make: 3 bytes per UTF-16 unit) and its newline.
    const needed = at + (typeof line === 'string' ? line.length * 3 : line.lineBytes) + 1;
    if (needed > buffer.length) {
      const grown = Buffer.allocUnsafe(Math.max(needed, buffer.length * 2));
      buffer.copy(grown, 0, 0, at);
      buffer = grown;
    }
    at += typeof line === 'string' ? buffer.write(line, at) : line.copyLine(buffer, at);
    buffer[at++] = 0x0a;
  }
  return { body: buffer.subarray(0, at), buffer };
}

class Store implements AnalyticsStore {
  readonly kind: 'chdb' | 'clickhouse';
  private readonly transport: Transport;
  private readonly migrations: readonly Migration[];
  private readonly log: Log;
  /** The buffer the next insert writes its body into, grown by earlier ones (null while one uses it). */
  private bodyBuffer: Buffer | null = null;
  /** Migrations in flight, by tenant database: concurrent callers share one run. */
  private readonly migrating = new Map<string, Promise<string>>();

  constructor(transport: Transport, migrations: readonly Migration[], log: Log) {
    this.kind = transport.kind;
    this.transport = transport;
    this.migrations = migrations;
    this.log = log;
  }

  async query<T = Record<string, unknown>>(sql: string, params?: Params): Promise<T[]> {
    return this.transport.query<T>(sql, normalizeParams(params));
  }

  stream<T = Record<string, unknown>>(sql: string, params?: Params): AsyncIterable<T> {
    const { transport } = this;
    return {
      // Parameters are checked when iteration starts, so a bad one rejects like any other error.
      async *[Symbol.asyncIterator]() {
        yield* transport.stream<T>(sql, normalizeParams(params));
      },
    };
  }

  streamBytes(sql: string, params: Params, format: RowFormat): AsyncIterable<Uint8Array> {
    const { transport } = this;
    return {
      async *[Symbol.asyncIterator]() {
        yield* transport.streamBytes(sql, normalizeParams(params), format);
      },
    };
  }

  async command(sql: string, params?: Params): Promise<void> {
    await this.transport.command(sql, normalizeParams(params));
  }

  insert(table: string, rows: readonly Record<string, unknown>[], options: InsertOptions = {}): Promise<void> {
    const { columns } = options;
    return this.insertLines(table, rows.map(columns ? (row) => encodeCompactRow(columns, row) : encodeRow), options);
  }

  async insertLines(table: string, lines: readonly EncodedLine[], options: InsertOptions = {}): Promise<void> {
    assertIdentifier('table', table);
    const target = options.database === undefined ? table : `${assertIdentifier('database', options.database)}.${table}`;
    if (lines.length === 0) return;
    // Without a token of the caller's a fresh one is sent: ClickHouse would otherwise drop a
    // block identical to a recent one (it hashes the content), silently losing rows that were
    // meant to be stored twice. Setting a token works on every server version, unlike turning
    // deduplication off (that setting changed name in ClickHouse 26).
    const token = options.dedupToken ?? `plumb-${crypto.randomUUID()}`;
    const columns = options.columns?.map((column) => assertIdentifier('column', column));
    // An insert made while another one uses the kept buffer writes into a new one.
    const kept = this.bodyBuffer;
    this.bodyBuffer = null;
    const { body, buffer } = await linesBody(lines, kept ?? Buffer.allocUnsafe(64 * 1024));
    try {
      await this.transport.insert(target, body, { insert_deduplication_token: token }, columns);
    } finally {
      if (buffer.length <= KEPT_BODY_BYTES) this.bodyBuffer = buffer;
    }
  }

  exportParquet(sql: string, params: Params, filePath: string): Promise<void> {
    return this.transport.exportParquet(sql, normalizeParams(params), filePath);
  }

  importParquet(table: string, filePath: string, options: { database: string }): Promise<void> {
    return this.transport.importParquet(`${assertIdentifier('database', options.database)}.${assertIdentifier('table', table)}`, filePath);
  }

  releaseMemory(): Promise<void> {
    return this.transport.releaseMemory();
  }

  tenantDatabase(teamId: string): string {
    return tenantDatabase(teamId);
  }

  ensureTenant(teamId: string): Promise<string> {
    let db: string;
    try {
      db = tenantDatabase(teamId);
    } catch (error) {
      return Promise.reject(error);
    }
    const inFlight = this.migrating.get(db);
    if (inFlight) return inFlight;
    const run = migrateTenant(this, db, this.migrations, this.log)
      .then(() => db)
      .finally(() => this.migrating.delete(db));
    this.migrating.set(db, run);
    return run;
  }

  ping(): Promise<void> {
    return this.transport.ping();
  }

  close(): Promise<void> {
    return this.transport.close();
  }
}
