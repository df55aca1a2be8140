// A stand-in for a ClickHouse server's HTTP interface, executing on chDB, so the @clickhouse/client
// transport is tested without a ClickHouse install. It speaks what the client (and curl) send:
// the query in the `query` URL parameter and/or the body (INSERT: statement in the URL, rows in
// the body), `param_*` query parameters, `database`, `default_format`, settings as URL parameters,
// gzip/deflate/br request bodies, `/ping`, and errors as HTTP 500 with X-ClickHouse-Exception-Code.
// chDB binds one data directory per process, so tests run this in a child process:
//   node test/support/clickhouse-test-server.ts --port 8123 [--host 127.0.0.1] [--data-dir DIR]
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { drainPending, Session } from 'chdb';
import { stringLiteral } from '../../lib/stores/analytics/transport.ts';

export interface ClickHouseTestServer {
  url: string;
  close(): Promise<void>;
}

// URL parameters that steer the HTTP layer rather than the query; everything else not listed
// here and not param_* is a ClickHouse setting and is applied with SET.
const HTTP_ONLY = new Set([
  'query', 'database', 'default_format', 'query_id', 'session_id', 'session_timeout', 'session_check', 'user', 'password',
  'quota_key', 'compress', 'decompress', 'buffer_size', 'wait_end_of_query', 'http_wait_end_of_query', 'enable_http_compression',
  'http_zlib_compression_level', 'role', 'add_http_cors_header', 'send_progress_in_http_headers', 'http_headers_progress_interval_ms',
]);

// A server's defaults where chDB's differ: it quotes 64-bit integers in JSON and does not accept
// a bare expression as a SELECT. Mirroring them keeps this a faithful stand-in.
const SERVER_DEFAULTS = ['--output_format_json_quote_64bit_integers=1', '--implicit_select=0'];

// Statements whose result is worth streaming; others (DDL, INSERT) run as one call.
const STREAMABLE = /^\s*\(?\s*(SELECT|WITH|SHOW|DESCRIBE|DESC|EXISTS|EXPLAIN)\b/i;
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** An error with ClickHouse's code, answered as the server would. */
class HttpQueryError extends Error {
  readonly code: number;
  constructor(code: number, type: string, message: string) {
    super(`Code: ${code}. DB::Exception: ${message}. (${type})`);
    this.code = code;
  }
}


async function readBody(req: IncomingMessage): Promise<Buffer> {
  const encoding = String(req.headers['content-encoding'] ?? 'identity').toLowerCase();
  const decoders: Record<string, (() => NodeJS.ReadWriteStream) | undefined> = {
    gzip: createGunzip,
    'x-gzip': createGunzip,
    deflate: createInflate,
    br: createBrotliDecompress,
  };
  let source: NodeJS.ReadableStream = req;
  if (encoding !== 'identity' && encoding !== '') {
    const decoder = decoders[encoding];
    if (!decoder) throw new HttpQueryError(36, 'BAD_ARGUMENTS', `Unknown Content-Encoding of HTTP request: ${encoding}`);
    source = req.pipe(decoder());
  }
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of source) chunks.push(Buffer.from(chunk as Buffer));
  } catch (error) {
    throw new HttpQueryError(354, 'ZLIB_INFLATE_FAILED', `Cannot decompress the ${encoding} request body: ${(error as Error).message}`);
  }
  return Buffer.concat(chunks);
}

// Formats whose bytes are not text: their input cannot be spliced into the SQL, and chDB's
// stream chunks of them do not concatenate into a valid file, so their output is sent whole.
const BINARY_FORMAT = /^(Parquet|Arrow|ArrowStream|ORC|Native|RowBinary\w*|Avro)$/i;
const BINARY_INSERT = /^\s*INSERT\s+INTO\s+([A-Za-z_][A-Za-z0-9_.]*)\s+FORMAT\s+([A-Za-z]+)\s*$/i;

/**
 * An INSERT of binary data (the statement in the URL, the data in the body) as chDB can run it:
 * the body goes to a file the engine reads back with file(), as the server reads it off the wire.
 */
function binaryInsert(urlQuery: string, body: Buffer, scratch: string): { sql: string; bodyFile: string } | undefined {
  const insert = BINARY_INSERT.exec(urlQuery);
  if (!insert || !BINARY_FORMAT.test(insert[2])) return undefined;
  const bodyFile = join(scratch, `${crypto.randomUUID()}.${insert[2].toLowerCase()}`);
  writeFileSync(bodyFile, body);
  return { sql: `INSERT INTO ${insert[1]} SELECT * FROM file(${stringLiteral(bodyFile)}, ${stringLiteral(insert[2])})`, bodyFile };
}

interface Request {
  sql: string;
  format: string;
  database: string | undefined;
  /** SET assignments: settings and param_* values, applied to this request's connection only. */
  assignments: string[];
  waitEnd: boolean;
  queryId: string;
  /** Where a binary INSERT's body was put; removed once the request is answered. */
  bodyFile?: string;
}

function parseRequest(url: URL, req: IncomingMessage, body: Buffer, scratch: string): Request {
  if (String(req.headers['content-type'] ?? '').startsWith('multipart/form-data')) {
    throw new HttpQueryError(48, 'NOT_IMPLEMENTED', 'multipart/form-data requests are not supported by the test server');
  }
  const urlQuery = url.searchParams.get('query') ?? '';
  // As the server does: the URL's query, then the body (an INSERT's data follows its FORMAT).
  const binary = binaryInsert(urlQuery, body, scratch);
  const text = body.toString('utf8');
  const sql = binary?.sql ?? (urlQuery && text ? `${urlQuery}\n${text}` : urlQuery || text);
  const assignments: string[] = [];
  for (const [name, value] of url.searchParams) {
    if (HTTP_ONLY.has(name)) continue;
    if (!NAME.test(name)) throw new HttpQueryError(115, 'UNKNOWN_SETTING', `Invalid setting or parameter name ${JSON.stringify(name)}`);
    // SET param_x = '…' gives the parameter exactly the text the client sent, which the engine
    // then parses as the placeholder's type, the same way the server reads param_x.
    assignments.push(`${name} = ${stringLiteral(value)}`);
  }
  const database = url.searchParams.get('database') ?? header(req, 'x-clickhouse-database');
  if (database !== undefined && !NAME.test(database)) throw new HttpQueryError(81, 'UNKNOWN_DATABASE', `Database ${database} does not exist`);
  const wait = url.searchParams.get('wait_end_of_query') ?? url.searchParams.get('http_wait_end_of_query');
  return {
    sql,
    format: url.searchParams.get('default_format') ?? header(req, 'x-clickhouse-format') ?? 'TabSeparated',
    database,
    assignments,
    waitEnd: wait === '1' || wait === 'true',
    queryId: url.searchParams.get('query_id') ?? crypto.randomUUID(),
    bodyFile: binary?.bodyFile,
  };
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** The output format: a trailing FORMAT clause wins over default_format, as on the server. */
function outputFormat(request: Request): string {
  if (/^\s*INSERT\b/i.test(request.sql)) return request.format;
  return /\bFORMAT\s+([A-Za-z]+)\s*;?\s*$/i.exec(request.sql)?.[1] ?? request.format;
}

function responseHeaders(request: Request, format: string, summary: Record<string, number>): Record<string, string> {
  return {
    'Content-Type': /JSON/i.test(format) ? 'application/json; charset=UTF-8' : BINARY_FORMAT.test(format) ? 'application/octet-stream' : 'text/plain; charset=UTF-8',
    'X-ClickHouse-Format': format,
    'X-ClickHouse-Query-Id': request.queryId,
    'X-ClickHouse-Timezone': 'UTC',
    'X-ClickHouse-Summary': JSON.stringify(Object.fromEntries(Object.entries(summary).map(([k, v]) => [k, String(v)]))),
  };
}

const emptySummary = { read_rows: 0, read_bytes: 0, written_rows: 0, written_bytes: 0, total_rows_to_read: 0, result_rows: 0, result_bytes: 0, elapsed_ns: 0 };

async function execute(dataDir: string, request: Request, res: ServerResponse): Promise<void> {
  // One connection per request (same data directory; libchdb allows many): its SETs and USE
  // cannot leak into another request, concurrent or later.
  const session = new Session(dataDir, { connectionArgs: SERVER_DEFAULTS });
  try {
    if (request.assignments.length > 0) await session.queryAsync(`SET ${request.assignments.join(', ')}`);
    if (request.database) await session.queryAsync(`USE ${request.database}`);
    const format = outputFormat(request);
    if (!request.waitEnd && STREAMABLE.test(request.sql) && !BINARY_FORMAT.test(format)) {
      await streamResult(session, request, format, res);
      return;
    }
    const result = await session.queryAsync(request.sql, { format });
    const bytes = result.bytes();
    const summary = { ...emptySummary, read_rows: result.rowsRead, read_bytes: result.bytesRead, result_bytes: bytes.length, elapsed_ns: Math.round(result.elapsed * 1e9) };
    res.writeHead(200, responseHeaders(request, format, summary));
    res.end(bytes);
  } finally {
    session.close();
  }
}

/** Sends blocks as chDB produces them; a client that hangs up cancels the query. */
async function streamResult(session: Session, request: Request, format: string, res: ServerResponse): Promise<void> {
  const stream = session.queryStream(request.sql, { format });
  const chunks = stream[Symbol.asyncIterator]();
  try {
    // The first block decides the status: an error before any output is still an HTTP 500.
    let step = await chunks.next();
    res.writeHead(200, responseHeaders(request, format, emptySummary));
    res.on('close', () => stream.cancel());
    while (!step.done && !res.destroyed) {
      if (!res.write(step.value.raw())) await Promise.race([once(res, 'drain'), once(res, 'close')]);
      step = await chunks.next();
    }
    res.end();
  } catch (error) {
    // Headers already went out: cut the connection, as the server does, so the client errs.
    if (res.headersSent) res.destroy(error as Error);
    else throw error;
  } finally {
    await chunks.return?.();
  }
}

function sendError(res: ServerResponse, error: unknown): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const message = error instanceof Error ? error.message : String(error);
  // chDB's messages already read "Code: N. DB::Exception: … (TYPE)", the server's own text.
  const stated = /Code: (\d+)\./.exec(message);
  const code = stated ? Number(stated[1]) : error instanceof HttpQueryError ? error.code : 1001;
  const text = stated ? message : `Code: ${code}. DB::Exception: ${message}. (STD_EXCEPTION)`;
  res.writeHead(500, { 'Content-Type': 'text/plain; charset=UTF-8', 'X-ClickHouse-Exception-Code': String(code) });
  res.end(`${text}\n`);
}

export async function startClickHouseTestServer(options: { dataDir: string; port?: number; host?: string }): Promise<ClickHouseTestServer> {
  const dataDir = resolve(options.dataDir);
  mkdirSync(dataDir, { recursive: true });
  // Held for the server's life: the engine stays loaded between requests, each of which opens
  // (cheaply) its own connection beside this one.
  const anchor = new Session(dataDir, { connectionArgs: SERVER_DEFAULTS });
  // Binary INSERT bodies are written here for the engine to read.
  const scratch = join(dataDir, 'http-bodies');
  mkdirSync(scratch, { recursive: true });
  await anchor.queryAsync('SELECT 1');

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    void (async () => {
      try {
        if (url.pathname === '/ping' || (url.pathname === '/' && req.method === 'GET' && !url.searchParams.has('query'))) {
          res.writeHead(200, { 'Content-Type': 'text/plain; charset=UTF-8' });
          res.end('Ok.\n');
          return;
        }
        if (url.pathname !== '/') {
          res.writeHead(404, { 'Content-Type': 'text/plain; charset=UTF-8' });
          res.end('There is no handle for this path\n');
          return;
        }
        const body = await readBody(req);
        const request = parseRequest(url, req, body, scratch);
        try {
          if (request.sql.trim() === '') throw new HttpQueryError(62, 'SYNTAX_ERROR', 'Empty query');
          await execute(dataDir, request, res);
        } finally {
          if (request.bodyFile) rmSync(request.bodyFile, { force: true });
        }
      } catch (error) {
        sendError(res, error);
      }
    })();
  });
  server.listen(options.port ?? 0, options.host ?? '127.0.0.1');
  await once(server, 'listening');
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;

  let closing: Promise<void> | undefined;
  return {
    url: `http://${host}:${address.port}`,
    close() {
      closing ??= (async () => {
        server.closeAllConnections();
        await new Promise<void>((done) => server.close(() => done()));
        anchor.close();
        await drainPending();
      })();
      return closing;
    },
  };
}

function flag(args: readonly string[], name: string): string | undefined {
  const index = args.indexOf(`--${name}`);
  if (index !== -1) return args[index + 1];
  return args.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3);
}

if (import.meta.main) {
  const args = process.argv.slice(2);
  const dataDir = flag(args, 'data-dir') ?? mkdtempSync(join(tmpdir(), 'plumb-clickhouse-test-'));
  const server = await startClickHouseTestServer({ dataDir, port: Number(flag(args, 'port') ?? 8123), host: flag(args, 'host') });
  // The first line is the URL: the spawning test reads it to know where to connect.
  console.log(server.url);
  console.error(`ClickHouse test server on chDB, data in ${dataDir}`);
  const stop = () => {
    void server.close().then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
