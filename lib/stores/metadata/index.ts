// The metadata store (users, teams, sites, goals, webhooks, audit …): one PostgreSQL dialect on two
// transports, embedded PGlite in <dataDir>/meta or a PostgreSQL server when a URL is given.
import type { Log } from '../../log.ts';
import { MIGRATIONS_DIR, runMigrations } from './migrate.ts';

export interface QueryResult<T> {
  rows: T[];
  rowCount: number;
}

export interface MetadataQueryable {
  /** Values only as `$1`… bound params. bigint columns come back as JS numbers on both transports. */
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<QueryResult<T>>;
}

export interface MetadataStore extends MetadataQueryable {
  readonly kind: 'pglite' | 'postgres';
  /**
   * BEGIN … COMMIT; ROLLBACK when fn throws, and the same error is rethrown. Use only `tx` inside
   * fn: on PGlite the transaction holds the single connection, so awaiting `store.query` inside
   * fn would wait for the transaction itself.
   */
  transaction<T>(fn: (tx: MetadataQueryable) => Promise<T>): Promise<T>;
  /** Applies pending migrations (Plumb's own, or a plugin's from its folder); applying nothing on a current database. */
  migrate(plugin?: { name: string; dir: string; schema: string }, options?: { upTo?: number }): Promise<{ applied: number[] }>;
  /** SELECT 1; rejects when the store cannot answer. */
  ping(): Promise<void>;
  /** Safe to call more than once. */
  close(): Promise<void>;
}

export interface MetadataStoreOptions {
  dataDir: string;
  databaseUrl?: string;
  log: Log;
  /** Apply pending migrations before returning (default true). */
  migrate?: boolean;
}

// What the transports give the store and the migrations runner. Not part of the public API:
// services use MetadataStore.

/** A connection that can also run a migration script (several statements, no params). */
export interface MetadataScriptable extends MetadataQueryable {
  exec(script: string): Promise<void>;
}

/** One connection held for a while, so a PostgreSQL session-level advisory lock covers everything done on it. */
export interface MetadataConnection extends MetadataScriptable {
  transaction<T>(fn: (tx: MetadataScriptable) => Promise<T>): Promise<T>;
}

export interface MetadataTransport extends MetadataQueryable {
  readonly kind: MetadataStore['kind'];
  transaction<T>(fn: (tx: MetadataScriptable) => Promise<T>): Promise<T>;
  /** Runs fn on one dedicated connection; nothing else uses that connection meanwhile. */
  withConnection<T>(fn: (connection: MetadataConnection) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** Opens the store on PGlite (default) or PostgreSQL (databaseUrl) and, unless told not to, migrates it. */
export async function openMetadataStore(options: MetadataStoreOptions): Promise<MetadataStore> {
  // Imported lazily so a PostgreSQL node never loads the PGlite wasm, and vice versa.
  const transport = options.databaseUrl
    ? await (await import('./postgres.ts')).openPostgres({ url: options.databaseUrl, log: options.log })
    : await (await import('./pglite.ts')).openPglite({ dataDir: options.dataDir, log: options.log });
  const store = storeOver(transport, options.log);
  if (options.migrate !== false) {
    try {
      await store.migrate();
    } catch (err) {
      // A refused or failed start must not leave a pool or a wasm instance holding the process open.
      await store.close().catch((closeErr: unknown) => options.log.warn({ err: closeErr }, 'metadata store: close after failed migration failed'));
      throw err;
    }
  }
  return store;
}

function storeOver(transport: MetadataTransport, log: Log): MetadataStore {
  let closing: Promise<void> | undefined;
  const open = () => {
    if (closing) throw new Error(`metadata store (${transport.kind}) is closed`);
  };
  return {
    kind: transport.kind,
    async query<T = Record<string, unknown>>(sql: string, params?: unknown[]) {
      open();
      return transport.query<T>(sql, params);
    },
    async transaction<T>(fn: (tx: MetadataQueryable) => Promise<T>) {
      open();
      return transport.transaction(fn);
    },
    async migrate(plugin, { upTo } = {}) {
      open();
      const options = plugin ? { dir: plugin.dir, log, upTo, plugin: { name: plugin.name, schema: plugin.schema } } : { dir: MIGRATIONS_DIR, log, upTo };
      return transport.withConnection((connection) => runMigrations(connection, options));
    },
    async ping() {
      open();
      await transport.query('SELECT 1');
    },
    close() {
      closing ??= transport.close();
      return closing;
    },
  };
}
