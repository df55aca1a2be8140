// The analytics transport over chDB: ClickHouse's engine inside this process, its data in one
// directory. libchdb binds ONE data directory per process, so a module-level registry refuses a
// second directory while a store is open (with a message that says so) and frees it on close.
import { mkdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { type ChdbQueryStream, drainPending, Session as ChdbConnection, type StreamChunk } from 'chdb';
import { releaseLoaderOnlyPages } from '../../loader-pages.ts';
import type { Log } from '../../log.ts';
import { AnalyticsStoreError, PARQUET_INSERT_SETTINGS, PARQUET_OUTPUT_SETTINGS, type Params, PINNED_SETTINGS, parseRows, type RowFormat, readMemorySettings, stringLiteral, type Transport, toStoreError } from './transport.ts';

/** Which directory this process's chDB is bound to, and how many stores use it. */
const registry = { dir: '', stores: 0 };

function claim(dir: string): void {
  if (registry.stores > 0 && registry.dir !== dir) {
    throw new AnalyticsStoreError(
      `chDB is already open on ${registry.dir} in this process; it binds one data directory per process, so ${dir} cannot be opened until that store is closed`,
    );
  }
  registry.dir = dir;
  registry.stores++;
}

function release(): void {
  registry.stores = Math.max(0, registry.stores - 1);
  if (registry.stores === 0) registry.dir = '';
}

// Settings given at connect (clickhouse-local argv form), so they hold for every query on the
// connection. Databases load while the store opens, so a damaged tenant fails the start, not
// some later query.
const argv = (settings: Record<string, string | number>) => Object.entries(settings).map(([name, value]) => `--${name}=${value}`);
// The engine loads a start's table parts, and removes outdated ones, on pools of up to 64, 32 and
// 128 threads, which then wait in its global thread pool for as long as the process runs, each
// with its stack and allocator caches: a start on 10M rows left 22 more threads than a start on
// an empty dir, and 6–10 MiB more memory at idle. One thread per core loads the parts as fast.
const cores = availableParallelism();
const PART_POOL_SETTINGS = { max_active_parts_loading_thread_pool_size: cores, max_outdated_parts_loading_thread_pool_size: cores, max_parts_cleaning_thread_pool_size: cores };
const CONNECTION_ARGS = ['--async_load_databases=0', ...argv(PINNED_SETTINGS), ...argv(PART_POOL_SETTINGS)];
// Stream connections cut results into blocks of at most this many rows. The engine works a few
// blocks ahead of the reader, so what a stream holds grows with the block: a 10M-row CSV export
// grew the process by 155–170 MiB with blocks of 8,192 rows, 120–130 with 2,048 and 100–125 with
// 1,024, for 15–20% more time (the default, 65,409 rows, can be tens of megabytes a block).
const STREAM_BLOCK_ARGS = ['--max_block_size=1024'];
// libchdb's jemalloc keeps pages it freed for reuse, and decays them only when the same arena
// allocates again (5 s, no background thread): what a burst of ingest, a dashboard or the merges
// after a start freed stays in the process while the node idles (~10 MiB after a start on 10M
// rows). Purged after every large read (an export's end) and every 10 s, which under load adds
// little to the 5 s decay; decaying at once instead made reads 4–5× slower.
const PURGE_EVERY_MS = 10_000;
/** `SETTINGS a = 'x', …` for a statement's own settings. */
const settingsClause = (settings: Record<string, string | number>) =>
  `SETTINGS ${Object.entries(settings)
    .map(([name, value]) => `${name} = ${stringLiteral(String(value))}`)
    .join(', ')}`;
// Reads that overlap another read get one thread each (see Readers).
const NARROW_ARGS = [...CONNECTION_ARGS, '--max_threads=1'];

/** The argv of the read connections: the connection's own settings and the read memory cap. */
interface ReadArgs {
  wide: string[];
  narrow: string[];
  stream: string[];
}

let relocationsReleased = false;

/** Once a process: libchdb's relocation table, read only while it loaded, handed back (see loader-pages.ts). */
function releaseLibraryRelocations(log: Log): void {
  if (relocationsReleased) return;
  relocationsReleased = true;
  try {
    const bytes = releaseLoaderOnlyPages('libchdb.so');
    log.debug({ mib: Math.round(bytes / 1048576) }, "libchdb's relocation table handed back");
  } catch (error) {
    // Where there is no /proc or no libc madvise the pages stay resident; the store works the same.
    log.info({ err: error }, "libchdb's relocation table stays resident");
  }
}

/** Runs tasks one at a time, in call order. */
class Serial {
  private tail: Promise<unknown> = Promise.resolve();
  run<T>(task: () => T | Promise<T>): Promise<T> {
    const result = this.tail.then(task);
    this.tail = result.catch(() => undefined);
    return result;
  }
}

const hasKeys = (params: Params) => Object.keys(params).length > 0;

/**
 * Read queries run side by side, each on a connection of its own. One query spreads its work over
 * every core poorly (an aggregation merges its threads' hash tables on one), so a query that runs
 * alone gets the `wide` connection (all cores) and one that overlaps another a `narrow` one (one
 * thread): a dashboard's queries then fill both cores instead of queueing for them (on 10M rows
 * the panels of a dashboard load, 400 ms one after another, take 270 ms side by side). At most
 * one query per core runs; the rest wait in call order.
 */
class Readers {
  private readonly wide: ChdbConnection;
  private wideBusy = false;
  private readonly narrow: ChdbConnection[];
  private readonly waiting: ((connection: ChdbConnection) => void)[] = [];
  private running = 0;
  private readonly limit: number;

  constructor(dir: string, cores: number, args: ReadArgs) {
    this.limit = Math.max(1, cores);
    this.wide = new ChdbConnection(dir, { connectionArgs: args.wide });
    // With one core the wide connection is the only one; else up to `limit` narrow ones can overlap.
    const narrowCount = this.limit === 1 ? 0 : this.limit;
    this.narrow = Array.from({ length: narrowCount }, () => new ChdbConnection(dir, { connectionArgs: args.narrow }));
  }

  /** Runs `task` on a connection once one is free. */
  async use<T>(task: (connection: ChdbConnection) => Promise<T>): Promise<T> {
    const connection = this.take() ?? (await new Promise<ChdbConnection>((resolve) => this.waiting.push(resolve)));
    try {
      return await task(connection);
    } finally {
      this.give(connection);
    }
  }

  close(): void {
    this.wide.close();
    for (const connection of this.narrow) connection.close();
  }

  private take(): ChdbConnection | undefined {
    if (this.running >= this.limit) return undefined;
    const connection = this.running === 0 && !this.wideBusy ? this.wide : this.narrow.pop();
    if (!connection) return undefined;
    if (connection === this.wide) this.wideBusy = true;
    this.running++;
    return connection;
  }

  private give(connection: ChdbConnection): void {
    this.running--;
    if (connection === this.wide) this.wideBusy = false;
    else this.narrow.push(connection);
    const next = this.waiting.length > 0 ? this.take() : undefined;
    if (next) this.waiting.shift()!(next);
  }
}

export class ChdbTransport implements Transport {
  readonly kind = 'chdb' as const;
  readonly dir: string;
  private readonly connection: ChdbConnection;
  private readonly readers: Readers;
  private readonly readArgs: ReadArgs;
  private readonly log: Log;
  /** Connections opened for streams; closed with the store. */
  private readonly streams = new Set<ChdbConnection>();
  /**
   * Bound parameters live in engine-wide state in libchdb: two parameterised statements running
   * at once can read each other's values. chdb serialises its own queryBindAsync calls, but a
   * bound stream starts outside that queue, so every bound start goes through this one.
   */
  private readonly bound = new Serial();
  private closing: Promise<void> | undefined;
  /** Gives the engine's freed memory back now and then (see releaseMemory). */
  private readonly purging: NodeJS.Timeout;

  private constructor(dir: string, connection: ChdbConnection, log: Log, readMemoryBytes: number | undefined) {
    this.dir = dir;
    this.connection = connection;
    const cap = argv(readMemorySettings(readMemoryBytes));
    this.readArgs = { wide: [...CONNECTION_ARGS, ...cap], narrow: [...NARROW_ARGS, ...cap], stream: [...CONNECTION_ARGS, ...STREAM_BLOCK_ARGS, ...cap] };
    this.readers = new Readers(dir, cores, this.readArgs);
    this.log = log;
    this.purging = setInterval(() => void this.releaseMemory().catch(() => undefined), PURGE_EVERY_MS);
    this.purging.unref();
  }

  /** `readMemoryBytes`: what one read may use (see readMemorySettings); unset, the engine's own limit. */
  static async open(dir: string, log: Log, readMemoryBytes?: number): Promise<ChdbTransport> {
    const absolute = resolve(dir);
    claim(absolute);
    try {
      mkdirSync(absolute, { recursive: true, mode: 0o700 });
      // A store closed a moment ago may still be releasing its connection; wait for it.
      await drainPending();
      const transport = new ChdbTransport(absolute, new ChdbConnection(absolute, { connectionArgs: CONNECTION_ARGS }), log, readMemoryBytes);
      await transport.ping();
      log.info({ dir: absolute }, 'analytics store open (chDB)');
      releaseLibraryRelocations(log);
      return transport;
    } catch (error) {
      release();
      throw toStoreError(error);
    }
  }

  /**
   * Reads run as streams on the readers' connections, so they run side by side: a stream binds its
   * parameters when it starts (one start at a time, under `bound`), and runs on its own after that.
   */
  async query<T>(sql: string, params: Params): Promise<T[]> {
    this.assertOpen();
    return this.readers.use(async (connection) => {
      let stream: ChdbQueryStream | undefined;
      try {
        stream = await this.startStream(connection, sql, params);
        const rows: T[] = [];
        for await (const chunk of stream) for (const row of parseRows<T>(chunk.text())) rows.push(row);
        // Closing the store cancels running reads, and a cancelled stream just ends: say so.
        if (this.closing) throw new AnalyticsStoreError('The analytics store was closed during the query');
        return rows;
      } catch (error) {
        throw toStoreError(error);
      } finally {
        stream?.cancel();
      }
    });
  }

  async command(sql: string, params: Params): Promise<void> {
    await this.run(sql, params, 'TabSeparated');
  }

  /**
   * chDB streams natively: queryStream hands over one block (at most 1,024 rows here) per
   * fetch, each fetch off the event loop, so rows are yielded while the query still runs. A
   * connection runs one stream at a time, so each stream gets its own connection to the same
   * directory, which libchdb allows; breaking out of the loop cancels the query.
   */
  async *stream<T>(sql: string, params: Params): AsyncIterable<T> {
    for await (const chunk of this.chunks(sql, params, 'JSONEachRow')) {
      for (const row of chunk.rows<T>()) yield row;
    }
  }

  /**
   * The same stream, each block's bytes as the engine wrote them. The addon hands every block over
   * as a buffer of its own (napi_create_buffer_copy), so it is passed on as is: a second copy here
   * doubled the export's in-flight buffers (~70 MiB on a 10 M-row export) for nothing.
   */
  async *streamBytes(sql: string, params: Params, format: RowFormat): AsyncIterable<Uint8Array> {
    for await (const chunk of this.chunks(sql, params, format)) yield chunk.raw();
  }

  /** The blocks of a stream on a connection of its own (see stream()). */
  private async *chunks(sql: string, params: Params, format: RowFormat): AsyncIterable<StreamChunk> {
    this.assertOpen();
    const connection = new ChdbConnection(this.dir, { connectionArgs: this.readArgs.stream });
    this.streams.add(connection);
    let stream: ChdbQueryStream | undefined;
    try {
      stream = await this.startStream(connection, sql, params, format);
      yield* stream;
      // Closing the store cancels its streams, and a cancelled chDB stream just ends: say so,
      // rather than let an export pass for complete.
      if (!this.streams.has(connection)) throw new AnalyticsStoreError('The analytics store was closed during the stream');
    } catch (error) {
      throw toStoreError(error);
    } finally {
      stream?.cancel();
      this.streams.delete(connection);
      connection.close();
    }
  }

  async insert(target: string, body: Buffer, settings: Record<string, string | number>, columns?: readonly string[]): Promise<void> {
    this.assertOpen();
    if (body.length === 0) return;
    try {
      // The raw insert hands the bytes to the engine's own parser.
      await this.connection.insert(
        columns ? { table: target, values: body, format: 'JSONCompactEachRow', columns, settings } : { table: target, values: body, format: 'JSONEachRow', settings },
      );
    } catch (error) {
      throw toStoreError(error);
    }
  }

  /**
   * The engine writes the file itself (`INSERT INTO FUNCTION file(…)`), so a table of any size
   * costs JS nothing. It runs on a connection of its own, as a stream does, so ingest and the
   * dashboard's reads go on meanwhile; its parameters are set on that connection (SET param_…),
   * never bound, because bound values are engine-wide in libchdb and a long export would hold
   * every other bound query back.
   */
  async exportParquet(sql: string, params: Params, filePath: string): Promise<void> {
    // No bloom filters or page indexes: the engine holds a file's bloom filters in memory until
    // its end (up to 128 MiB), and exports join files without them (lib/exports/parquet.ts).
    const settings = settingsClause({ ...PARQUET_OUTPUT_SETTINGS, output_format_parquet_write_bloom_filter: 0, output_format_parquet_write_page_index: 0, engine_file_truncate_on_insert: 1 });
    await this.onOwnConnection(params, `INSERT INTO FUNCTION file(${stringLiteral(filePath)}, 'Parquet') ${sql} ${settings}`, this.readArgs.narrow);
  }

  async importParquet(target: string, filePath: string): Promise<void> {
    // The file's columns are the table's own, in its order: Plumb wrote it from this table's DDL.
    // Beside the insert blocks, chDB's Parquet reader gets its read-ahead capped at 256 MiB (its
    // default is 4 GiB): loading 10M hits peaked at 2.2 GiB with the defaults and at 1.0 GiB with
    // both, for 15 s instead of 6–10 s.
    const settings = settingsClause({ ...PARQUET_INSERT_SETTINGS, input_format_parquet_memory_high_watermark: 268_435_456 });
    await this.onOwnConnection({}, `INSERT INTO ${target} SELECT * FROM file(${stringLiteral(filePath)}, 'Parquet') ${settings}`, NARROW_ARGS);
  }

  async releaseMemory(): Promise<void> {
    await this.run('SYSTEM JEMALLOC PURGE', {}, 'TabSeparated');
  }

  async ping(): Promise<void> {
    await this.run('SELECT 1', {}, 'TabSeparated');
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      clearInterval(this.purging);
      for (const connection of this.streams) connection.close();
      this.streams.clear();
      this.readers.close();
      this.connection.close();
      // close() defers the native teardown behind running operations; the directory is free
      // (for a store on another path) only once they are done.
      await drainPending();
      release();
      this.log.info({ dir: this.dir }, 'analytics store closed (chDB)');
    })();
    return this.closing;
  }

  private async run(sql: string, params: Params, format: string): Promise<string> {
    this.assertOpen();
    try {
      const result = hasKeys(params)
        ? await this.bound.run(() => this.connection.queryBindAsync(sql, params, { format }))
        : await this.connection.queryAsync(sql, { format });
      return result.text();
    } catch (error) {
      throw toStoreError(error);
    }
  }

  /** Runs one statement on a connection of its own, its parameters SET on it as text. */
  private async onOwnConnection(params: Params, sql: string, connectionArgs: string[]): Promise<void> {
    this.assertOpen();
    const connection = new ChdbConnection(this.dir, { connectionArgs });
    this.streams.add(connection);
    try {
      const assignments = Object.entries(params).map(([name, value]) => {
        if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) || (typeof value !== 'string' && typeof value !== 'number')) {
          throw new AnalyticsStoreError(`parameter ${name}: only strings and numbers can be set here`);
        }
        return `param_${name} = ${stringLiteral(String(value))}`;
      });
      if (assignments.length > 0) await connection.queryAsync(`SET ${assignments.join(', ')}`, { format: 'TabSeparated' });
      await connection.queryAsync(sql, { format: 'TabSeparated' });
      if (!this.streams.has(connection)) throw new AnalyticsStoreError('The analytics store was closed during the statement');
    } catch (error) {
      throw toStoreError(error);
    } finally {
      this.streams.delete(connection);
      connection.close();
    }
  }

  /** Starts a stream (JSONEachRow unless told) on `connection`; a bound one only once no other bound start or query runs. */
  private startStream(connection: ChdbConnection, sql: string, params: Params, format: RowFormat = 'JSONEachRow'): Promise<ChdbQueryStream> {
    if (!hasKeys(params)) return Promise.resolve(connection.queryStream(sql, { format }));
    return this.bound.run(() => connection.queryStreamBind(sql, params, { format }));
  }

  private assertOpen(): void {
    if (this.closing) throw new AnalyticsStoreError('The analytics store is closed');
  }
}
