// The analytics transport over a ClickHouse server's HTTP interface (@clickhouse/client), used
// when PLUMB_CLICKHOUSE_URL is set. Same SQL, same parameters, same rows as the chDB transport.
import { createReadStream, createWriteStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { type ClickHouseClient, ClickHouseLogLevel, createClient, type Logger } from '@clickhouse/client';
import type { Log } from '../../log.ts';
import { AnalyticsStoreError, PARQUET_INSERT_SETTINGS, PARQUET_OUTPUT_SETTINGS, type Params, PINNED_SETTINGS, type RowFormat, readMemorySettings, type Transport, toStoreError } from './transport.ts';

// Buffer the whole response on the server before answering: an error met halfway through a
// result then arrives as an HTTP error, not as a truncated 200. Streams do not set it.
const COMPLETE = { wait_end_of_query: 1 } as const;

/** The client's own log lines, into ours; its errors are rethrown to the caller, so debug. */
function loggerClass(log: Log): new () => Logger {
  return class implements Logger {
    trace(params: { message: string; args?: Record<string, unknown> }) {
      log.trace({ clickhouse: params.args }, params.message);
    }
    debug(params: { message: string; args?: Record<string, unknown> }) {
      log.debug({ clickhouse: params.args }, params.message);
    }
    info(params: { message: string; args?: Record<string, unknown> }) {
      log.debug({ clickhouse: params.args }, params.message);
    }
    warn(params: { message: string; args?: Record<string, unknown>; err?: Error }) {
      log.warn({ clickhouse: params.args, err: params.err }, params.message);
    }
    error(params: { message: string; args?: Record<string, unknown>; err: Error }) {
      log.debug({ clickhouse: params.args, err: params.err }, params.message);
    }
  };
}

/** The URL without its password, for logs. */
function redact(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '****';
  return parsed.toString();
}

export class ClickHouseTransport implements Transport {
  readonly kind = 'clickhouse' as const;
  private readonly client: ClickHouseClient;
  private readonly log: Log;
  private readonly url: string;
  /** Set on every read (see readMemorySettings). */
  private readonly readSettings: Record<string, number>;
  private closing: Promise<void> | undefined;

  private constructor(client: ClickHouseClient, url: string, log: Log, readMemoryBytes: number | undefined) {
    this.client = client;
    this.url = url;
    this.log = log;
    this.readSettings = readMemorySettings(readMemoryBytes);
  }

  /** `readMemoryBytes`: what one read may use (see readMemorySettings); unset, the server's own limit. */
  static async open(url: string, log: Log, readMemoryBytes?: number): Promise<ClickHouseTransport> {
    const client = createClient({
      url,
      // Uncompressed both ways: Plumb talks to ClickHouse over a private network, and plain
      // bodies keep the wire format identical to what the test server and curl see.
      compression: { request: false, response: false },
      clickhouse_settings: { ...PINNED_SETTINGS },
      // Socket idle limit. Dashboard queries answer well within it and streams keep sending.
      request_timeout: 60_000,
      application: 'plumb',
      log: { LoggerClass: loggerClass(log), level: ClickHouseLogLevel.WARN },
    });
    const transport = new ClickHouseTransport(client, redact(url), log, readMemoryBytes);
    try {
      await transport.ping();
    } catch (error) {
      await client.close();
      throw error;
    }
    log.info({ url: transport.url }, 'analytics store open (ClickHouse)');
    return transport;
  }

  async query<T>(sql: string, params: Params): Promise<T[]> {
    this.assertOpen();
    try {
      const result = await this.client.query({ query: sql, query_params: params, format: 'JSONEachRow', clickhouse_settings: { ...this.readSettings, ...COMPLETE } });
      return await result.json<T>();
    } catch (error) {
      throw toStoreError(error);
    }
  }

  /** Rows are decoded as the response arrives; breaking out of the loop closes the socket. */
  async *stream<T>(sql: string, params: Params): AsyncIterable<T> {
    this.assertOpen();
    let result: Awaited<ReturnType<ClickHouseClient['query']>> | undefined;
    try {
      result = await this.client.query({ query: sql, query_params: params, format: 'JSONEachRow', clickhouse_settings: this.readSettings });
      for await (const rows of result.stream<T>()) {
        for (const row of rows) yield row.json();
      }
      // A socket cut by close() can end the response without an error: never pass for complete.
      if (this.closing) throw new AnalyticsStoreError('The analytics store was closed during the stream');
    } catch (error) {
      throw this.closing ? new AnalyticsStoreError('The analytics store was closed during the stream', { cause: error }) : toStoreError(error);
    } finally {
      result?.close();
    }
  }

  /**
   * The server's own output, passed on as it arrives; breaking out of the loop closes the socket.
   * A server that fails midway has already answered 200: since ClickHouse 25.11 it ends the body
   * with its exception marker (its tag in a response header), which is turned into an error here,
   * and older servers cut the connection, which errs too; a stream never ends as if complete.
   */
  async *streamBytes(sql: string, params: Params, format: RowFormat): AsyncIterable<Uint8Array> {
    this.assertOpen();
    let body: Readable | undefined;
    try {
      const result = await this.client.exec({ query: `${sql} FORMAT ${format}`, query_params: params, clickhouse_settings: this.readSettings });
      body = result.stream;
      const tag = result.response_headers['x-clickhouse-exception-tag'];
      const marker = typeof tag === 'string' && tag !== '' ? Buffer.from(`${tag}\r\n__exception__\r\n`) : undefined;
      let tail = Buffer.alloc(0);
      for await (const chunk of body) {
        const bytes = chunk as Buffer;
        if (marker) tail = Buffer.concat([tail, bytes]).subarray(-marker.length);
        yield bytes;
      }
      if (marker?.equals(tail)) throw new AnalyticsStoreError('ClickHouse failed while sending the result');
      if (this.closing) throw new AnalyticsStoreError('The analytics store was closed during the stream');
    } catch (error) {
      throw this.closing ? new AnalyticsStoreError('The analytics store was closed during the stream', { cause: error }) : toStoreError(error);
    } finally {
      body?.destroy();
    }
  }

  async command(sql: string, params: Params): Promise<void> {
    this.assertOpen();
    try {
      await this.client.command({ query: sql, query_params: params, clickhouse_settings: COMPLETE });
    } catch (error) {
      throw toStoreError(error);
    }
  }

  async insert(target: string, body: Buffer, settings: Record<string, string | number>, columns?: readonly string[]): Promise<void> {
    this.assertOpen();
    if (body.length === 0) return;
    try {
      // exec, not insert: insert re-encodes JSON rows itself, while exec sends our rows' bytes as
      // the body unchanged (statement in the URL), the same text chDB gets.
      const into = columns ? `${target} (${columns.join(', ')}) FORMAT JSONCompactEachRow` : `${target} FORMAT JSONEachRow`;
      const result = await this.client.exec({
        query: `INSERT INTO ${into}`,
        values: Readable.from([body], { objectMode: false }),
        clickhouse_settings: { ...settings, ...COMPLETE },
      });
      for await (const _ of result.stream) {
        // An INSERT answers with an empty body; reading it to the end frees the socket.
      }
    } catch (error) {
      throw toStoreError(error);
    }
  }

  /**
   * The server's Parquet output, streamed to the file. wait_end_of_query makes the server finish
   * the result before answering, so a failure midway is an HTTP error, never a truncated file.
   */
  async exportParquet(sql: string, params: Params, filePath: string): Promise<void> {
    this.assertOpen();
    try {
      const result = await this.client.exec({ query: `${sql} FORMAT Parquet`, query_params: params, clickhouse_settings: { ...this.readSettings, ...PARQUET_OUTPUT_SETTINGS, ...COMPLETE } });
      await pipeline(result.stream, createWriteStream(filePath, { mode: 0o600 }));
    } catch (error) {
      throw toStoreError(error);
    }
  }

  async importParquet(target: string, filePath: string): Promise<void> {
    this.assertOpen();
    try {
      const result = await this.client.exec({
        query: `INSERT INTO ${target} FORMAT Parquet`,
        values: createReadStream(filePath),
        clickhouse_settings: { ...COMPLETE, ...PARQUET_INSERT_SETTINGS },
      });
      for await (const _ of result.stream) {
        // An INSERT answers with an empty body; reading it to the end frees the socket.
      }
    } catch (error) {
      throw toStoreError(error);
    }
  }

  async releaseMemory(): Promise<void> {
    // The server's memory is its own process's, not this node's.
  }

  async ping(): Promise<void> {
    this.assertOpen();
    const result = await this.client.ping();
    if (!result.success) throw new AnalyticsStoreError(`ClickHouse at ${this.url} did not answer: ${result.error.message}`, { cause: result.error });
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.client.close();
      this.log.info({ url: this.url }, 'analytics store closed (ClickHouse)');
    })();
    return this.closing;
  }

  private assertOpen(): void {
    if (this.closing) throw new AnalyticsStoreError('The analytics store is closed');
  }
}
