// A Plumb takeout (GET /api/sites/{id}/takeout) as an import source: the zip in csv, ndjson, json
// or parquet, or the xlsx. Its analytics tables (pageviews, events, visits, web vitals, AI
// fetches, the imported_* days) go back into the same tables of the target site, every row with
// site_id = the target and import_id = the import; its goals and funnels are added to the site
// (one whose name the site already uses is left alone), recorded on the import and removed with
// it; its settings and share links are not carried over (the manifest says so in a warning).
//
// The manifest decides what is read: its kind and version, its site's domain (a takeout is of one
// site: one of another domain is refused, so a file picked by mistake cannot fill the wrong site),
// and each table's columns, which must be those the takeout of this Plumb writes
// (lib/exports/takeout-tables.ts), in that order. A file whose header differs is refused; a row
// with a value its column cannot hold is skipped and counted with its reason. validate and run
// read the same way; run writes the accepted rows in batches, each with a deduplication token
// naming the import, the table and the batch, so a batch sent again is stored once.
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { createInterface } from 'node:readline';
import { pipeline } from 'node:stream/promises';
import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects } from 'hyparquet';
import { localDate } from '../../analytics/range.ts';
import { TAKEOUT_VERSION } from '../../exports/takeout.ts';
import { FUNNEL_COLUMNS, GOAL_COLUMNS } from '../../exports/site-takeout.ts';
import { ANALYTICS_TAKEOUT_TABLES, type AnalyticsTakeoutTable, type TakeoutColumn } from '../../exports/takeout-tables.ts';
import { type FunnelInput, type FunnelStep, checkSteps } from '../../funnels/funnels.ts';
import { checkGoal, type GoalInput } from '../../goals/goals.ts';
import { readSheets } from '../../exports/xlsx.ts';
import { csvRecords, type InputFile, inputFiles } from '../files.ts';
import { type ImportContext, type ImportDataset, ImportInputError, type ImportManifest, type ImportSource, type StagedFile } from '../source.ts';
import { SkippedLog } from '../skipped.ts';
import { nativeOverlap } from '../overlap.ts';

const MANIFEST = 'manifest.json';
const ZIP_FORMATS = ['csv', 'ndjson', 'json', 'parquet'];
/** Rows per insert: large enough for few parts, small enough to hold in memory. */
const BATCH_ROWS = 10_000;
/** Rows a Parquet file is read by at a time. */
const PARQUET_SLICE = 10_000;
/** A manifest is a few kilobytes; more is not one. */
const MAX_MANIFEST_BYTES = 1024 * 1024;
const NOT_IMPORTED = ['site', 'share_links'];

/** The site's goals and funnels in a takeout: added to the site, not written as rows. */
interface SetupTable {
  name: 'goals' | 'funnels';
  setup: true;
  columns: readonly TakeoutColumn[];
}
const columnsOf = (spec: readonly (readonly [string, TakeoutColumn['type'], string])[]): TakeoutColumn[] => spec.map(([name, type]) => ({ name, type }));
const SETUP_TABLES: readonly SetupTable[] = [
  { name: 'goals', setup: true, columns: columnsOf(GOAL_COLUMNS) },
  { name: 'funnels', setup: true, columns: columnsOf(FUNNEL_COLUMNS) },
];
/** A table the source reads: one written back as rows, or goals and funnels. */
type ReadTable = AnalyticsTakeoutTable | SetupTable;
const readTable = (name: string): ReadTable | undefined => ANALYTICS_TAKEOUT_TABLES.find((t) => t.name === name) ?? SETUP_TABLES.find((t) => t.name === name);

type Value = string | number | boolean | bigint | Date | null | undefined;
type Row = Record<string, unknown>;

/** What a manifest says, whichever form it came in. */
interface TakeoutManifest {
  format: string;
  domain: string;
  tables: { name: string; file: string; rows: number | null; columns: TakeoutColumn[] }[];
}

/** A takeout table to read: its definition, its rows as read from the file, and where they are. */
interface TableInput {
  table: ReadTable;
  file: string;
  rows: AsyncIterable<{ line: number; values: Record<string, Value> }>;
}

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?Z$/;
const DAY = /^\d{4}-\d{2}-\d{2}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DIGITS = /^\d+$/;
const UINT64_MAX = 18_446_744_073_709_551_615n;

/** JSON columns: what their value must be to fit the column (a map of texts, texts, or counts). */
const JSON_SHAPES: Record<string, 'map' | 'texts' | 'counts'> = { props: 'map', pages: 'texts', hostnames: 'texts', page_hits: 'counts', hostname_hits: 'counts' };

interface RowProblem {
  reason: string;
  message: string;
}

/** One value of a file → the value to insert, or why its row is skipped. */
function convert(column: TakeoutColumn, raw: Value): { value: unknown } | { problem: RowProblem } {
  const bad = (reason: string) => ({ problem: { reason: `${column.type} column with ${reason}`, message: `${column.name} is ${JSON.stringify(String(raw)).slice(0, 80)}` } });
  const text = raw === null || raw === undefined ? '' : raw instanceof Date ? raw.toISOString() : String(raw);
  switch (column.type) {
    case 'timestamp': {
      if (raw instanceof Date) return Number.isNaN(raw.getTime()) ? bad('an invalid time') : { value: raw };
      const at = ISO_INSTANT.test(text) ? new Date(text) : null;
      return at && !Number.isNaN(at.getTime()) ? { value: at } : bad('a value that is not an ISO 8601 UTC time');
    }
    case 'date': {
      const day = raw instanceof Date ? raw.toISOString().slice(0, 10) : text;
      return DAY.test(day) && !Number.isNaN(Date.parse(`${day}T00:00:00Z`)) ? { value: day } : bad('a value that is not a day (YYYY-MM-DD)');
    }
    case 'uuid':
      return UUID.test(text) ? { value: text.toLowerCase() } : bad('a value that is not a UUID');
    case 'string':
      return { value: text };
    case 'integer': {
      const n = typeof raw === 'number' ? raw : DIGITS.test(text) ? Number(text) : Number.NaN;
      return Number.isInteger(n) && n >= 0 && n <= 0xffff_ffff ? { value: n } : bad('a value that is not a non-negative integer');
    }
    case 'int64':
      return DIGITS.test(text) && BigInt(text) <= UINT64_MAX ? { value: text } : bad('a value that is not a non-negative 64-bit integer');
    case 'float': {
      const n = typeof raw === 'number' ? raw : text.trim() === '' ? Number.NaN : Number(text);
      return Number.isFinite(n) ? { value: n } : bad('a value that is not a number');
    }
    case 'decimal': {
      if (text === '') return { value: null };
      const n = Number(text);
      return Number.isFinite(n) && n >= 0 ? { value: n } : bad('a value that is not a number');
    }
    case 'json': {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        return bad('a value that is not JSON');
      }
      const shape = JSON_SHAPES[column.name];
      const fits =
        shape === 'map'
          ? parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) && Object.values(parsed).every((v) => typeof v === 'string')
          : Array.isArray(parsed) && parsed.every((v) => (shape === 'texts' ? typeof v === 'string' : Number.isInteger(v) && v >= 0));
      return fits ? { value: parsed } : bad(shape === 'map' ? 'JSON that is not an object of texts' : `JSON that is not an array of ${shape === 'texts' ? 'texts' : 'counts'}`);
    }
    case 'boolean':
      return { value: raw === true || text === 'true' };
  }
}

/** The column that places a row in time: a day for the imported_* tables, else the first timestamp. */
const timeColumn = (table: AnalyticsTakeoutTable) => table.columns.find((c) => c.type === 'date' || c.type === 'timestamp')!;

/** A manifest being filled in as the tables are read. */
class Tally {
  readonly datasets: ImportDataset[] = [];
  readonly skipped = new SkippedLog();
  readonly warnings: string[] = [];
  /** First and last instant (timestamp tables) or day of each dataset, turned into local days at the end. */
  private readonly spans = new Map<ImportDataset, { first: number; last: number; days: boolean }>();

  dataset(name: string, file: string): ImportDataset {
    const dataset: ImportDataset = { name, files: [file], rows_scanned: 0, rows_accepted: 0, rows_skipped: 0, from: null, to: null };
    this.datasets.push(dataset);
    return dataset;
  }

  accept(dataset: ImportDataset, when: unknown): void {
    dataset.rows_scanned++;
    dataset.rows_accepted++;
    const days = typeof when === 'string';
    const at = days ? Date.parse(`${when}T00:00:00Z`) : (when as Date).getTime();
    const span = this.spans.get(dataset);
    if (!span) this.spans.set(dataset, { first: at, last: at, days });
    else {
      if (at < span.first) span.first = at;
      if (at > span.last) span.last = at;
    }
  }

  /** A row with no time of its own (a goal, a funnel): counted, outside the date range. */
  acceptUndated(dataset: ImportDataset): void {
    dataset.rows_scanned++;
    dataset.rows_accepted++;
  }

  skip(dataset: ImportDataset, file: string, line: number, problem: RowProblem): void {
    dataset.rows_scanned++;
    dataset.rows_skipped++;
    this.skipped.record(problem.reason, file, line, problem.message);
  }

  manifest(timezone: string): ImportManifest {
    for (const [dataset, span] of this.spans) {
      const day = (ms: number) => (span.days ? new Date(ms).toISOString().slice(0, 10) : localDate(new Date(ms), timezone));
      dataset.from = day(span.first);
      dataset.to = day(span.last);
    }
    const sum = (field: 'rows_scanned' | 'rows_accepted' | 'rows_skipped') => this.datasets.reduce((total, d) => total + d[field], 0);
    const froms = this.datasets.flatMap((d) => (d.from ? [d.from] : [])).sort();
    const tos = this.datasets.flatMap((d) => (d.to ? [d.to] : [])).sort();
    return {
      source: 'plumb',
      datasets: this.datasets,
      from: froms[0] ?? null,
      to: tos.at(-1) ?? null,
      rows_scanned: sum('rows_scanned'),
      rows_accepted: sum('rows_accepted'),
      rows_skipped: sum('rows_skipped'),
      skipped: this.skipped.list(),
      overlap: { days: 0, from: null, to: null },
      warnings: this.warnings,
    };
  }
}

// ————— the manifest —————

/** Checks what every form of the manifest must say; answers it with its tables' columns checked. */
function checkManifest(where: string, manifest: TakeoutManifest & { kind: unknown; version: unknown }, ctx: ImportContext): TakeoutManifest {
  if (manifest.kind !== 'plumb-takeout') throw new ImportInputError(where, null, `not the takeout of a Plumb site (kind is ${JSON.stringify(manifest.kind)}, not "plumb-takeout")`);
  if (manifest.version !== TAKEOUT_VERSION) throw new ImportInputError(where, null, `a takeout of version ${JSON.stringify(manifest.version)}; this Plumb reads version ${TAKEOUT_VERSION}`);
  if (typeof manifest.domain !== 'string' || manifest.domain.toLowerCase() !== ctx.site.domain.toLowerCase()) {
    throw new ImportInputError(where, null, `this is the takeout of ${manifest.domain}, not of ${ctx.site.domain}: a takeout goes back only into a site of the same domain`);
  }
  for (const listed of manifest.tables) {
    const table = readTable(listed.name);
    if (!table) continue;
    const found = listed.columns.map((c) => `${c.name}:${c.type}`).join(', ');
    const expected = table.columns.map((c) => `${c.name}:${c.type}`).join(', ');
    if (found !== expected) throw new ImportInputError(where, null, `the columns of ${table.name} are ${found}; this Plumb's are ${expected}`);
  }
  return manifest;
}

function notImportedWarning(manifest: TakeoutManifest, tally: Tally): void {
  const listed = manifest.tables.filter((t) => NOT_IMPORTED.includes(t.name)).map((t) => t.name);
  if (listed.length > 0) tally.warnings.push('The site’s settings and share links are in the takeout but are not carried over: this site keeps its own settings, and share links are made anew.');
  const unknown = manifest.tables.filter((t) => !NOT_IMPORTED.includes(t.name) && !readTable(t.name)).map((t) => t.name);
  if (unknown.length > 0) tally.warnings.push(`Tables this Plumb does not know are skipped: ${unknown.join(', ')}.`);
}

// ————— the zip (csv, ndjson, json, parquet) —————

async function readAll(file: InputFile, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of await file.open()) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new ImportInputError(file.name, null, `larger than ${limit} bytes; not a takeout manifest`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

async function zipManifest(entries: readonly InputFile[], ctx: ImportContext): Promise<{ manifest: TakeoutManifest; folder: string }> {
  const found = entries.find((entry) => basename(entry.name) === MANIFEST);
  if (!found) throw new ImportInputError(MANIFEST, null, 'the zip holds no manifest.json: it is not a Plumb takeout');
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(await readAll(found, MAX_MANIFEST_BYTES));
  } catch (error) {
    if (error instanceof ImportInputError) throw error;
    throw new ImportInputError(MANIFEST, null, `not JSON (${(error as Error).message})`);
  }
  const site = (parsed.site ?? {}) as { domain?: unknown };
  if (!Array.isArray(parsed.tables)) throw new ImportInputError(MANIFEST, null, 'it lists no tables');
  const manifest = checkManifest(MANIFEST, { kind: parsed.kind, version: parsed.version, format: String(parsed.format), domain: site.domain as string, tables: parsed.tables }, ctx);
  if (!ZIP_FORMATS.includes(manifest.format)) throw new ImportInputError(MANIFEST, null, `format ${JSON.stringify(manifest.format)} is not one of ${ZIP_FORMATS.join(', ')}`);
  const folder = found.name.slice(0, found.name.length - MANIFEST.length);
  return { manifest, folder };
}

/** The rows of a table's file in the zip, by the manifest's format. */
function zipRows(format: string, file: InputFile, table: ReadTable): AsyncIterable<{ line: number; values: Record<string, Value> }> {
  const names = table.columns.map((c) => c.name);
  if (format === 'csv') return csvRows(file, names);
  if (format === 'parquet') return parquetRows(file, names);
  return jsonLines(file, names);
}

async function* csvRows(file: InputFile, names: string[]): AsyncIterable<{ line: number; values: Record<string, Value> }> {
  for await (const { line, record } of csvRecords(file, { columns: names, required: names })) yield { line, values: record };
}

/**
 * NDJSON, and JSON as Plumb writes it (an array with one row a line): each line that is not the
 * array's bracket is one row, its separating comma dropped.
 */
async function* jsonLines(file: InputFile, names: string[]): AsyncIterable<{ line: number; values: Record<string, Value> }> {
  const lines = createInterface({ input: await file.open(), crlfDelay: Number.POSITIVE_INFINITY });
  let line = 0;
  let checked = false;
  for await (const raw of lines) {
    line++;
    const text = raw.trim().replace(/,$/, '');
    if (text === '' || text === '[' || text === ']') continue;
    let row: unknown;
    try {
      row = JSON.parse(text);
    } catch {
      row = null;
    }
    if (row === null || typeof row !== 'object' || Array.isArray(row)) {
      yield { line, values: { [BROKEN]: text.slice(0, 80) } };
      continue;
    }
    if (!checked) {
      const missing = names.filter((name) => !(name in row));
      if (missing.length > 0) throw new ImportInputError(file.name, line, `missing column${missing.length > 1 ? 's' : ''} ${missing.join(', ')}; found ${Object.keys(row).join(', ')}`);
      checked = true;
    }
    yield { line, values: row as Record<string, Value> };
  }
}

/** A row that could not be read at all (not JSON): marked so it is skipped with that reason. */
const BROKEN = '\u0000broken';

/** hyparquet reads a file by random access: the entry is copied to a temporary file first. */
async function* parquetRows(file: InputFile, names: string[]): AsyncIterable<{ line: number; values: Record<string, Value> }> {
  const dir = await mkdtemp(join(tmpdir(), 'plumb-import-'));
  try {
    const path = join(dir, 'table.parquet');
    await pipeline(await file.open(), createWriteStream(path));
    let buffer: Awaited<ReturnType<typeof asyncBufferFromFile>>;
    let total: number;
    let columns: string[];
    try {
      buffer = await asyncBufferFromFile(path);
      const metadata = await parquetMetadataAsync(buffer);
      total = Number(metadata.num_rows);
      columns = metadata.schema.slice(1).map((element) => element.name);
    } catch (error) {
      throw new ImportInputError(file.name, null, `not a readable Parquet file (${(error as Error).message})`);
    }
    const missing = names.filter((name) => !columns.includes(name));
    if (missing.length > 0) throw new ImportInputError(file.name, null, `missing column${missing.length > 1 ? 's' : ''} ${missing.join(', ')}; found ${columns.join(', ')}`);
    for (let start = 0; start < total; start += PARQUET_SLICE) {
      const rows = await parquetReadObjects({ file: buffer, columns: names, rowStart: start, rowEnd: Math.min(start + PARQUET_SLICE, total) });
      // The row's place in the file (1-based) stands for its line.
      for (const [i, row] of rows.entries()) yield { line: start + i + 1, values: row as Record<string, Value> };
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function* zipTables(staged: readonly StagedFile[], ctx: ImportContext, tally: Tally, totals: { rows: number | null }): AsyncIterable<TableInput> {
  const entries = await inputFiles(staged);
  const { manifest, folder } = await zipManifest(entries, ctx);
  notImportedWarning(manifest, tally);
  const counted = manifest.tables.filter((t) => readTable(t.name));
  totals.rows = counted.every((t) => typeof t.rows === 'number') ? counted.reduce((sum, t) => sum + (t.rows ?? 0), 0) : null;
  for (const listed of counted) {
    const table = readTable(listed.name)!;
    const file = entries.find((entry) => entry.name === `${folder}${listed.file}`);
    if (!file) throw new ImportInputError(MANIFEST, null, `it lists ${listed.file}, which the zip does not hold`);
    yield { table, file: file.name, rows: zipRows(manifest.format, file, table) };
  }
}

// ————— the spreadsheet —————

/** The name of the table a sheet holds: its own, less a continuation's ` (n)`. */
const sheetTable = (name: string) => name.replace(/ \(\d+\)$/, '');

async function* sheetTables(staged: StagedFile, ctx: ImportContext, tally: Tally): AsyncIterable<TableInput> {
  // An .xlsx is a zip: its parts are read under the same limits as an uploaded zip's entries.
  const asZip = `${staged.name}.zip`;
  let parts: InputFile[];
  try {
    parts = await inputFiles([{ ...staged, name: asZip }]);
  } catch (error) {
    if (error instanceof ImportInputError && error.file === asZip) throw new ImportInputError(staged.name, error.line, error.message.replace(`${asZip}: `, '').replace('zip archive', 'xlsx file'));
    throw error;
  }
  let manifest: TakeoutManifest | null = null;
  for await (const sheet of readSheets(parts)) {
    if (manifest === null) {
      if (sheet.name !== 'manifest') throw new ImportInputError(staged.name, null, `its first sheet is ${JSON.stringify(sheet.name)}, not the takeout's manifest`);
      manifest = await sheetManifest(staged.name, sheet.rows, ctx);
      notImportedWarning(manifest, tally);
      continue;
    }
    const table = readTable(sheetTable(sheet.name));
    if (!table) {
      await drain(sheet.rows);
      continue;
    }
    yield { table, file: `${staged.name}, sheet ${sheet.name}`, rows: sheetRows(`${staged.name}, sheet ${sheet.name}`, sheet.rows, table) };
  }
  if (manifest === null) throw new ImportInputError(staged.name, null, 'it holds no sheet: not a Plumb takeout');
}

/** Reads a sheet that is not imported to its end (the reader goes on to the next sheet only then). */
async function drain(rows: AsyncIterable<unknown>): Promise<void> {
  for await (const row of rows) void row;
}

/** The manifest sheet: `field | value` rows, then a `table | name | columns` row per table. */
async function sheetManifest(file: string, rows: AsyncIterable<unknown[]>, ctx: ImportContext): Promise<TakeoutManifest> {
  const fields: Record<string, unknown> = {};
  const tables: TakeoutManifest['tables'] = [];
  for await (const [field, value, columns] of rows) {
    if (field === 'table') {
      const listed = String(columns ?? '')
        .split(',')
        .map((pair) => pair.trim())
        .filter(Boolean)
        .map((pair) => {
          const [name, type] = pair.split(':');
          return { name, type } as TakeoutColumn;
        });
      tables.push({ name: String(value), file: String(value), rows: null, columns: listed });
    } else if (typeof field === 'string') fields[field] = value;
  }
  return checkManifest(`${file}, sheet manifest`, { kind: fields.kind, version: fields.version, format: 'xlsx', domain: fields['site.domain'] as string, tables }, ctx);
}

async function* sheetRows(file: string, rows: AsyncIterable<unknown[]>, table: ReadTable): AsyncIterable<{ line: number; values: Record<string, Value> }> {
  const names = table.columns.map((c) => c.name);
  let header: string[] | null = null;
  let line = 0;
  for await (const row of rows) {
    line++;
    if (header === null) {
      header = row.map((cell) => String(cell ?? ''));
      if (header.join(',') !== names.join(',')) throw new ImportInputError(file, 1, `the header is ${header.join(', ')}; ${table.name} has ${names.join(', ')}`);
      continue;
    }
    const values: Record<string, Value> = {};
    for (const [i, name] of names.entries()) values[name] = row[i] as Value;
    yield { line, values };
  }
}

// ————— reading and writing —————


/** A JSON text column of a goal or funnel (JSON text in every format of the takeout). */
function jsonValue(raw: Value): unknown {
  try {
    return JSON.parse(raw === null || raw === undefined ? '' : String(raw));
  } catch {
    return undefined;
  }
}

const text = (raw: Value) => (raw === null || raw === undefined ? '' : String(raw));
const refused = (what: string, error: unknown) => ({ problem: { reason: `a ${what} this Plumb refuses`, message: (error as Error).message } });

/** A goals row as the goal it describes, checked by the rules a goal made in the dashboard meets. */
function goalOf(values: Record<string, Value>): { value: GoalInput } | { problem: RowProblem } {
  const conditions = jsonValue(values.property_conditions);
  const goal: GoalInput = {
    name: text(values.name),
    type: text(values.type) as GoalInput['type'],
    ...(text(values.event_name) ? { event_name: text(values.event_name) } : {}),
    ...(text(values.path_pattern) ? { path_pattern: text(values.path_pattern) } : {}),
    property_conditions: Array.isArray(conditions) ? conditions : [],
    revenue: text(values.revenue_currency) ? { currency: text(values.revenue_currency) } : null,
  };
  try {
    checkGoal(goal);
    return { value: goal };
  } catch (error) {
    return refused('goal', error);
  }
}

/** A funnels row as the funnel it describes, its steps checked as the dashboard's are. */
function funnelOf(values: Record<string, Value>): { value: FunnelInput } | { problem: RowProblem } {
  const steps = jsonValue(values.steps);
  const window = Number(text(values.window_seconds));
  const funnel: FunnelInput = { name: text(values.name), steps: (Array.isArray(steps) ? steps : []) as FunnelStep[], ...(Number.isInteger(window) && window > 0 ? { window_seconds: window } : {}) };
  try {
    if (funnel.name.trim() === '') throw new Error('a funnel needs a name');
    checkSteps(funnel.steps);
    return { value: funnel };
  } catch (error) {
    return refused('funnel', error);
  }
}

/** Adds the takeout's goals and funnels to the site; says in the manifest what was added and what the site already had. */
async function addSetup(ctx: ImportContext, setup: { goals: GoalInput[]; funnels: FunnelInput[] }, tally: Tally): Promise<void> {
  for (const [kind, items, add] of [
    ['goals', setup.goals, (item: GoalInput | FunnelInput) => ctx.setup!.addGoal(item as GoalInput)],
    ['funnels', setup.funnels, (item: GoalInput | FunnelInput) => ctx.setup!.addFunnel(item as FunnelInput)],
  ] as const) {
    const kept: string[] = [];
    for (const item of items) {
      ctx.signal.throwIfAborted();
      if ((await add(item)) === 'exists') kept.push(item.name);
    }
    if (kept.length > 0) tally.warnings.push(`This site already had ${kind} named ${kept.map((name) => `“${name}”`).join(', ')}: they were kept as they are, not replaced by the takeout’s.`);
  }
}

async function readTakeout(staged: readonly StagedFile[], ctx: ImportContext, write: boolean): Promise<ImportManifest> {
  if (staged.length !== 1) throw new ImportInputError(staged[1]?.name ?? '', null, 'a takeout is one file (its .zip or its .xlsx)');
  const [file] = staged;
  const tally = new Tally();
  const totals: { rows: number | null } = { rows: null };
  const tables = file.name.toLowerCase().endsWith('.xlsx') ? sheetTables(file, ctx, tally) : zipTables(staged, ctx, tally, totals);
  let rowsRead = 0;
  // Batches numbered per table across its sheets, the same way on every run of the import.
  const batchesOf = new Map<string, number>();
  const setup: { goals: GoalInput[]; funnels: FunnelInput[] } = { goals: [], funnels: [] };
  for await (const input of tables) {
    const { table } = input;
    const dataset = tally.datasets.find((d) => d.name === table.name) ?? tally.dataset(table.name, input.file);
    if (!dataset.files.includes(input.file)) dataset.files.push(input.file);
    if ('setup' in table) {
      for await (const { line, values } of input.rows) {
        const read = table.name === 'goals' ? goalOf(values) : funnelOf(values);
        if ('problem' in read) tally.skip(dataset, input.file, line, read.problem);
        else {
          tally.acceptUndated(dataset);
          if (table.name === 'goals') setup.goals.push(read.value as GoalInput);
          else setup.funnels.push(read.value as FunnelInput);
        }
      }
      continue;
    }
    const time = timeColumn(table);
    let batch: Row[] = [];
    const flush = async () => {
      if (batch.length === 0) return;
      ctx.signal.throwIfAborted();
      const number = batchesOf.get(table.name) ?? 0;
      batchesOf.set(table.name, number + 1);
      // The token names the batch by its place in the import, so sending it again stores nothing.
      await ctx.store.insert(table.table, batch, { database: ctx.site.tenant, dedupToken: `plumb:${ctx.importId}:${table.name}:${number}` });
      batch = [];
    };
    rows: for await (const { line, values } of input.rows) {
      rowsRead++;
      if (rowsRead % BATCH_ROWS === 0) {
        ctx.signal.throwIfAborted();
        ctx.progress(rowsRead, totals.rows ?? undefined);
      }
      if (BROKEN in values) {
        tally.skip(dataset, input.file, line, { reason: 'a line that is not a JSON object', message: `the line reads ${JSON.stringify(values[BROKEN])}` });
        continue;
      }
      const row: Row = { site_id: ctx.site.id, import_id: ctx.importId };
      for (const column of table.columns) {
        const converted = convert(column, values[column.name]);
        if ('problem' in converted) {
          tally.skip(dataset, input.file, line, converted.problem);
          continue rows;
        }
        row[column.name] = converted.value;
      }
      tally.accept(dataset, row[time.name]);
      if (!write) continue;
      // A visit is written as its one live state.
      if (table.collapsed) Object.assign(row, { sign: 1, version: 1 });
      batch.push(row);
      if (batch.length >= BATCH_ROWS) await flush();
    }
    await flush();
  }
  ctx.progress(rowsRead, rowsRead);
  // Last, once every row is in: a run that fails before this point has added no goal or funnel.
  if (write && ctx.setup) await addSetup(ctx, setup, tally);
  const manifest = tally.manifest(ctx.site.timezone);
  return { ...manifest, overlap: await nativeOverlap(ctx, manifest.from, manifest.to) };
}

export const plumbSource: ImportSource = {
  id: 'plumb',
  kind: 'raw',
  label: 'Plumb takeout',
  description:
    'The takeout of a Plumb site (Site settings → Takeout, or GET /api/sites/{id}/takeout) of the same domain: the .zip in any of its formats, or the .xlsx. ' +
    'Its pageviews, events, visits, web vitals, AI fetches and imported days are added to this site, and its goals and funnels unless this site has ones of the same names; its settings and share links are not.',
  extensions: ['.zip', '.xlsx'],
  maxFiles: 1,
  validate: (files, ctx) => readTakeout(files, ctx, false),
  run: (files, ctx) => readTakeout(files, ctx, true),
};
