// What the two analytics transports (chDB in process, ClickHouse over HTTP) share: the transport
// contract, the one error type, the settings pinned on both, and how JS values become query
// parameters and JSONEachRow rows, so a query behaves the same whichever engine runs it.

export type Params = Record<string, unknown>;

/**
 * Output formats whose text is rows and nothing else (no header, prefix or suffix): chDB formats
 * each block of a stream on its own, so a CSV header or a JSON array's brackets would repeat
 * once per block, while these concatenate into the format's output on both transports.
 */
export const ROW_FORMATS = ['CSV', 'JSONEachRow'] as const;
export type RowFormat = (typeof ROW_FORMATS)[number];

/** The part of the store that differs between chDB and a ClickHouse server. */
export interface Transport {
  readonly kind: 'chdb' | 'clickhouse';
  query<T>(sql: string, params: Params): Promise<T[]>;
  stream<T>(sql: string, params: Params): AsyncIterable<T>;
  /** The result's bytes in `format`, as they are produced; breaking out of the loop cancels the query. */
  streamBytes(sql: string, params: Params, format: RowFormat): AsyncIterable<Uint8Array>;
  command(sql: string, params: Params): Promise<void>;
  /**
   * `target` is an already validated `table` or `db.table`; `body` is JSONEachRow text (UTF-8),
   * or JSONCompactEachRow (one array of values a line, in the order of `columns`) when `columns`
   * names the (already validated) columns.
   */
  insert(target: string, body: Buffer, settings: Record<string, string | number>, columns?: readonly string[]): Promise<void>;
  /** Writes the result of `sql` as one Parquet file at `filePath` on this machine; the rows never pass through JS. */
  exportParquet(sql: string, params: Params, filePath: string): Promise<void>;
  /** Inserts the Parquet file at `filePath` (on this machine) into `target`, an already validated `db.table`. */
  importParquet(target: string, filePath: string): Promise<void>;
  /** Hands memory the engine has freed back to the system, where the engine runs in this process. */
  releaseMemory(): Promise<void>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A failure reported by ClickHouse (or chDB), with the same shape on both transports:
 * `code` is ClickHouse's numeric error code (47 for an unknown identifier, 60 for an unknown
 * table…), `type` its name (`UNKNOWN_IDENTIFIER`), the message ClickHouse's own text.
 */
export class AnalyticsStoreError extends Error {
  readonly code: number | undefined;
  readonly type: string | undefined;
  constructor(message: string, details: { code?: number; type?: string; cause?: unknown } = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'AnalyticsStoreError';
    this.code = details.code;
    this.type = details.type;
  }
}

// ClickHouse's exception text: "Code: 47. DB::Exception: <message>. (UNKNOWN_IDENTIFIER)", maybe
// followed by " (version …)". The type is read from the end: a message can itself hold a
// parenthesised upper-case word (a syntax error quotes the query), which the client's own
// parser takes for the type; its code is always right, so `code` is the one to branch on.
const CODE = /(?:Code|Error): (\d+)\./;
const TYPE_AT_END = /\(([A-Z][A-Z0-9_]{2,})\)(?:\s*\(version [^)]*\))?\.?\s*$/;

const tidy = (message: string) => message.trim().replace(/\.$/, '');

/** Wraps whatever a transport threw into an AnalyticsStoreError, keeping ClickHouse's code. */
export function toStoreError(error: unknown): AnalyticsStoreError {
  if (error instanceof AnalyticsStoreError) return error;
  const text = error instanceof Error ? error.message : String(error);
  const code = CODE.exec(text);
  const body = text.indexOf('Exception: ');
  if (code && body !== -1) {
    const type = TYPE_AT_END.exec(text);
    const message = tidy(text.slice(body + 'Exception: '.length, type ? type.index : undefined));
    // A stream's error text can end before the type's name: the code says it as well.
    const named = type?.[1] ?? (Number(code[1]) === MEMORY_LIMIT_EXCEEDED ? 'MEMORY_LIMIT_EXCEEDED' : undefined);
    return new AnalyticsStoreError(message, { code: Number(code[1]), type: named, cause: error });
  }
  // @clickhouse/client has already parsed the server's text (its code is a numeric string).
  const fields = (error ?? {}) as { code?: unknown; type?: unknown };
  return new AnalyticsStoreError(tidy(text), {
    code: /^\d+$/.test(String(fields.code)) ? Number(fields.code) : undefined,
    type: typeof fields.type === 'string' ? fields.type : undefined,
    cause: error,
  });
}

/**
 * Settings pinned on every chDB connection and every HTTP request. chDB's defaults differ from a
 * server's (it prints 64-bit integers unquoted, which JSON.parse would round), and a server's time
 * zone is whatever its operator chose; pinning them makes results identical on both.
 */
export const PINNED_SETTINGS = {
  // UInt64/Int64 as JSON strings: session_id hashes exceed 2^53 and would lose digits as numbers.
  output_format_json_quote_64bit_integers: 1,
  // Every timestamp is UTC: parameters, toDate(ts), and the text of DateTime64 results.
  session_timezone: 'UTC',
  // Accept ISO 8601 ('2024-01-02T03:04:05.678Z') as well as ClickHouse's own text in inserts.
  date_time_input_format: 'best_effort',
} as const;

/** ClickHouse's code for a query that needed more memory than it may use. */
export const MEMORY_LIMIT_EXCEEDED = 241;

/**
 * Settings that hold one read to `bytes` of memory: a sort or an aggregation that grows past a
 * quarter of it goes on on disk (slower, same answer; a hash table grows by doubling, and merging
 * the spilled parts needs room too, so half was measured to fail where a quarter spills), and a
 * read that still needs more fails with
 * MEMORY_LIMIT_EXCEEDED, which the API answers 503, instead of taking the node's memory from
 * ingest and every other request. Reads only: inserts and merges keep the engine's own limits.
 */
export const readMemorySettings = (bytes: number | undefined): Record<string, number> =>
  bytes ? { max_memory_usage: bytes, max_bytes_before_external_group_by: Math.floor(bytes / 4), max_bytes_before_external_sort: Math.floor(bytes / 4) } : {};

/**
 * Settings for Parquet files Plumb writes: row groups of 100,000 rows bound what the writer holds
 * in memory (the default, a million rows, can be hundreds of megabytes of a wide table); Snappy,
 * which every Parquet reader decodes without extra codecs.
 */
export const PARQUET_OUTPUT_SETTINGS = { output_format_parquet_row_group_size: '100000', output_format_parquet_compression_method: 'snappy' } as const;

/**
 * Settings for loading a Parquet file: blocks of 100,000 rows bound what the engine holds of a
 * large file at once (restoring 10M rows peaked at 2.2 GiB with the defaults' million-row blocks).
 */
export const PARQUET_INSERT_SETTINGS = { max_insert_block_size: '100000', min_insert_block_size_rows: '100000', min_insert_block_size_bytes: '67108864' } as const;

/** A ClickHouse string literal holding `text` exactly. */
export function stringLiteral(text: string): string {
  return `'${text.replace(/[\\']/g, (c) => `\\${c}`).replace(/\0/g, '\\0')}'`;
}

const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;

/** INSERT targets cannot be bound as parameters, so their names are checked instead. */
export function assertIdentifier(kind: 'table' | 'database' | 'column', name: unknown): string {
  if (typeof name !== 'string' || !IDENTIFIER.test(name)) {
    throw new AnalyticsStoreError(`Invalid ${kind} name ${JSON.stringify(name)}: expected lower-case letters, digits and _`);
  }
  return name;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `tenant_<uuid hex>`: the database that holds one team's analytics. */
export function tenantDatabase(teamId: string): string {
  if (typeof teamId !== 'string' || !UUID.test(teamId)) {
    throw new AnalyticsStoreError(`Invalid team id ${JSON.stringify(teamId)}: expected a UUID`);
  }
  return `tenant_${teamId.replaceAll('-', '').toLowerCase()}`;
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** ClickHouse's DateTime64(3) text in UTC: 'YYYY-MM-DD hh:mm:ss.sss'. */
export function formatDateTime(date: Date): string {
  if (Number.isNaN(date.getTime())) throw new AnalyticsStoreError('Invalid Date');
  return (
    `${pad(date.getUTCFullYear(), 4)}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())} ` +
    `${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())}.${pad(date.getUTCMilliseconds(), 3)}`
  );
}

/**
 * Reduces a parameter value to the types on which chDB's binder and @clickhouse/client's
 * formatter agree, both of which then write ClickHouse's escaped text (top-level strings
 * TSV-escaped, nested strings as quoted literals). Where they would differ it decides here:
 * a Date becomes its millisecond UTC text (chDB drops the milliseconds, the client sends epoch
 * seconds), a boolean becomes 1/0 (chDB writes `true`, which a UInt8 parameter refuses), and a
 * number that cannot be exact (NaN, ±Infinity, beyond 2^53) is refused rather than rounded.
 */
export function normalizeParam(value: unknown, name = 'parameter'): unknown {
  if (value === null || value === undefined) return null;
  switch (typeof value) {
    case 'string':
    case 'bigint':
      return value;
    case 'boolean':
      return value ? 1 : 0;
    case 'number':
      if (!Number.isFinite(value)) throw new AnalyticsStoreError(`${name}: ${value} cannot be bound`);
      if (Number.isInteger(value) && !Number.isSafeInteger(value)) {
        throw new AnalyticsStoreError(`${name}: ${value} is beyond 2^53; pass a bigint or a string`);
      }
      return value;
    case 'object':
      break;
    default:
      throw new AnalyticsStoreError(`${name}: a ${typeof value} cannot be bound`);
  }
  if (value instanceof Date) return formatDateTime(value);
  if (Array.isArray(value)) return value.map((item) => normalizeParam(item, name));
  if (value instanceof Set) return [...value].map((item) => normalizeParam(item, name));
  if (ArrayBuffer.isView(value) && !(value instanceof DataView)) {
    return Array.from(value as unknown as ArrayLike<number | bigint>, (item) => normalizeParam(item, name));
  }
  if (value instanceof Map) {
    return new Map([...value].map(([k, v]) => [normalizeParam(k, name), normalizeParam(v, name)]));
  }
  // A plain object binds as Map(String, …): keys are strings by construction.
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, normalizeParam(v, name)]));
}

export function normalizeParams(params: Params | undefined): Params {
  const out: Params = {};
  for (const [name, value] of Object.entries(params ?? {})) out[name] = normalizeParam(value, name);
  return out;
}

/**
 * One row as its JSONEachRow line (no newline), the same bytes for both transports. Dates become
 * UTC text (not toJSON's ISO form), bigints become quoted digits (JSON has no bigint, and a 64-bit
 * hash as a JSON number would lose digits; ClickHouse reads quoted numbers into integer columns),
 * Maps become objects and Sets arrays.
 */
export function encodeRow(row: Record<string, unknown>): string {
  // The replacer costs a call into JS for every key; rows of plain JSON values (all that ingest
  // produces) encode the same without it, at half the cost.
  return isPlainRow(row) ? JSON.stringify(row) : JSON.stringify(row, rowValue);
}

/**
 * A row encoded by encodeRow or encodeCompactRow: its text, or where its UTF-8 bytes are kept
 * (the single node keeps the lines of the ingest records waiting for the writer so:
 * lib/ingest/line-ring.ts).
 */
export type EncodedLine = string | LineBytes;

export interface LineBytes {
  readonly lineBytes: number;
  /** Copies the line's bytes into `target` at `at`; answers how many. */
  copyLine(target: Buffer, at: number): number;
}

/**
 * One row as its JSONCompactEachRow line: the values of `columns`, in that order, each encoded as
 * encodeRow encodes it; a column the row lacks is null, which the store reads as the column's
 * default (input_format_null_as_default), as it does a key left out of a JSONEachRow line.
 * Without the key names on every row the store parses about half the bytes, at ~40% less CPU.
 */
export function encodeCompactRow(columns: readonly string[], row: Record<string, unknown>): string {
  const values = valuesReader(columns)(row);
  // Only the values encoded are judged.
  let plain = true;
  for (let i = 0; plain && i < values.length; i++) plain = isPlainValue(values[i]);
  return plain ? JSON.stringify(values) : JSON.stringify(values, rowValue);
}

type ValuesReader = (row: Record<string, unknown>) => unknown[];
type RowWriter = (row: Record<string, unknown>, values: readonly unknown[]) => Record<string, unknown>;

/**
 * A function over rows of `columns`, compiled once per list of columns (a row layout's, which lives
 * as long as the process) from source that names each column as a property (`row.ts`): V8 then
 * gives each access an inline cache of its own that knows the row's shape, where a loop over the
 * names (`row[column]`) makes every access one generic keyed lookup, ~140 instructions each, 27 of
 * them a pageview. The names are checked to be identifiers before they are written into the source.
 */
function compiledFor<F>(compiled: WeakMap<readonly string[], F>, columns: readonly string[], compile: (names: readonly string[]) => F): F {
  let fn = compiled.get(columns);
  if (fn === undefined) {
    fn = compile(columns.map((column) => assertIdentifier('column', column)));
    compiled.set(columns, fn);
  }
  return fn;
}

const valuesReaders = new WeakMap<readonly string[], ValuesReader>();
const rowWriters = new WeakMap<readonly string[], RowWriter>();

/** A function that reads a row's `columns` into an array, null for a column it lacks. */
const valuesReader = (columns: readonly string[]): ValuesReader =>
  compiledFor(valuesReaders, columns, (names) => new Function('row', `return [${names.map((name) => `row.${name} ?? null`).join(', ')}];`) as ValuesReader);

/** valuesReader's inverse: a function that sets a row's `columns` from a compact line's values, in their order, and answers the row. */
export const rowWriter = (columns: readonly string[]): RowWriter =>
  compiledFor(rowWriters, columns, (names) => new Function('row', 'values', `${names.map((name, i) => `row.${name} = values[${i}];`).join(' ')} return row;`) as RowWriter);

const isPrimitive = (value: unknown) => value === null || (typeof value !== 'object' && typeof value !== 'bigint');

/** A string, number, boolean or null, or an array or plain object of them (one level down). */
function isPlainValue(value: unknown): boolean {
  if (value === null) return true;
  const type = typeof value;
  if (type === 'string' || type === 'number' || type === 'boolean') return true;
  if (type !== 'object') return false;
  if (Array.isArray(value)) {
    for (const item of value) if (!isPrimitive(item)) return false;
    return true;
  }
  if (Object.getPrototypeOf(value) !== Object.prototype) return false;
  for (const inner in value as object) if (!isPrimitive((value as Record<string, unknown>)[inner])) return false;
  return true;
}

/** Strings, numbers, booleans and null, alone or in arrays and plain objects one level down. */
function isPlainRow(row: Record<string, unknown>): boolean {
  for (const key in row) if (!isPlainValue(row[key])) return false;
  return true;
}

function rowValue(this: unknown, key: string, value: unknown): unknown {
  // JSON.stringify has already called Date#toJSON on `value`; the holder still has the Date.
  const raw = (this as Record<string, unknown>)[key];
  if (raw instanceof Date) return formatDateTime(raw);
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof Map) return Object.fromEntries(value);
  if (value instanceof Set) return [...value];
  return value;
}

/** Parses JSONEachRow text (one object a line) into rows. */
export function parseRows<T>(text: string): T[] {
  const rows: T[] = [];
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    if (end > start) rows.push(JSON.parse(text.slice(start, end)) as T);
    start = end + 1;
  }
  return rows;
}
