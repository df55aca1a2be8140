// Plausible's CSV export as an import source: the zip Plausible gives (one CSVWithNames file per
// table, named imported_<table>_<YYYYMMDD>_<YYYYMMDD>.csv, or without the imported_ prefix), or
// those CSV files loose. Each file fills the imported_* table of its name (migration 0004) with
// daily aggregates; the stats read them for the days without native data (lib/analytics/query/
// imported.ts). Plausible's dates are the local days of its site, taken as the Plumb site's.
//
// validate and run read the same way: a file whose name is not one of the export's is skipped
// with a warning (an error when none is), a header must have exactly the table's columns, and a
// row whose date is malformed or outside its file name's range, or whose count is not a
// non-negative integer, is skipped and counted with its reason. run writes the accepted rows in
// batches, each with a deduplication token, so a batch sent twice is stored once.
import { basename } from 'node:path';
import { parse } from 'csv-parse/sync';
import { csvRecords, type InputFile, inputFiles } from '../files.ts';
import { type ImportContext, type ImportDataset, ImportInputError, type ImportManifest, type ImportSource, type StagedFile } from '../source.ts';
import { SkippedLog } from '../skipped.ts';
import { nativeOverlap } from '../overlap.ts';
import * as V from './plausible-values.ts';

/** count: UInt64; count32: UInt32 (the tables' bounces); maybe_count: a count or empty (NULL). */
type Kind = 'date' | 'text' | 'count' | 'count32' | 'maybe_count';
type Row = Record<string, string | number | null>;

interface Table {
  /** The imported_* table, also the export's file name stem. */
  name: string;
  /** The export's columns (Plausible's CSV importer's input structure), in its order. */
  columns: readonly [string, Kind][];
  /** Plausible's spellings → Plumb's (plausible-values.ts). */
  normalise?(row: Row): void;
}

const COUNT = 'count';
const TEXT = 'text';
/** The figures most tables end with. */
const VISIT_FIGURES: [string, Kind][] = [['visitors', COUNT], ['visits', COUNT], ['visit_duration', COUNT], ['bounces', 'count32'], ['pageviews', COUNT]];

const TABLES: readonly Table[] = [
  { name: 'imported_visitors', columns: [['date', 'date'], ['visitors', COUNT], ['pageviews', COUNT], ['bounces', COUNT], ['visits', COUNT], ['visit_duration', COUNT]] },
  {
    name: 'imported_sources',
    columns: [
      ['date', 'date'], ['source', TEXT], ['referrer', TEXT], ['utm_source', TEXT], ['utm_medium', TEXT], ['utm_campaign', TEXT], ['utm_content', TEXT], ['utm_term', TEXT],
      ['pageviews', COUNT], ['visitors', COUNT], ['visits', COUNT], ['visit_duration', COUNT], ['bounces', 'count32'],
    ],
    normalise: (row) => Object.assign(row, V.plausibleOrigin(String(row.source), String(row.referrer))),
  },
  {
    name: 'imported_pages',
    columns: [['date', 'date'], ['hostname', TEXT], ['page', TEXT], ['visits', COUNT], ['visitors', COUNT], ['pageviews', COUNT], ['scroll_depth', 'maybe_count'], ['pageleave_visitors', COUNT]],
  },
  { name: 'imported_entry_pages', columns: [['date', 'date'], ['entry_page', TEXT], ['visitors', COUNT], ['entrances', COUNT], ['visit_duration', COUNT], ['bounces', 'count32'], ['pageviews', COUNT]] },
  { name: 'imported_exit_pages', columns: [['date', 'date'], ['exit_page', TEXT], ['visitors', COUNT], ['visit_duration', COUNT], ['exits', COUNT], ['bounces', 'count32'], ['pageviews', COUNT]] },
  { name: 'imported_custom_events', columns: [['date', 'date'], ['name', TEXT], ['link_url', TEXT], ['path', TEXT], ['visitors', COUNT], ['events', COUNT]] },
  {
    name: 'imported_locations',
    columns: [['date', 'date'], ['country', TEXT], ['region', TEXT], ['city', COUNT], ...VISIT_FIGURES],
    normalise: (row) => Object.assign(row, { country: V.plausibleCountry(String(row.country)), region: V.plausibleRegion(String(row.region)) }),
  },
  {
    name: 'imported_operating_systems',
    columns: [['date', 'date'], ['operating_system', TEXT], ['operating_system_version', TEXT], ...VISIT_FIGURES],
    normalise: (row) =>
      Object.assign(row, { operating_system: V.plausibleOperatingSystem(String(row.operating_system)), operating_system_version: V.plausibleOsVersion(String(row.operating_system_version)) }),
  },
  { name: 'imported_devices', columns: [['date', 'date'], ['device', TEXT], ...VISIT_FIGURES], normalise: (row) => Object.assign(row, { device: V.plausibleDevice(String(row.device)) }) },
  {
    name: 'imported_browsers',
    columns: [['date', 'date'], ['browser', TEXT], ['browser_version', TEXT], ...VISIT_FIGURES],
    normalise: (row) => Object.assign(row, { browser: V.plausibleBrowser(String(row.browser)), browser_version: V.plausibleBrowserVersion(String(row.browser_version)) }),
  },
];

/** Rows per insert: large enough for few parts, small enough to hold in memory. */
const BATCH_ROWS = 10_000;
/** Longer values are refused: no page, source or campaign is this long, and the tables index them. */
const MAX_TEXT = 2048;

/** A file of the export: which table, and the days its name says it covers. */
interface ExportFile {
  input: InputFile;
  table: Table;
  first: string;
  last: string;
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const validDate = (date: string) => {
  const ms = DATE.test(date) ? Date.parse(`${date}T00:00:00Z`) : Number.NaN;
  return !Number.isNaN(ms) && new Date(ms).toISOString().slice(0, 10) === date;
};
const compactDate = (yyyymmdd: string) => `${yyyymmdd.slice(0, 4)}-${yyyymmdd.slice(4, 6)}-${yyyymmdd.slice(6, 8)}`;

/** The table and date range of an export file's name (a zip entry may sit in a folder), or null. */
export function exportFileName(name: string): { table: Table; first: string; last: string } | null {
  const match = /^(?:imported_)?([a-z_]+)_(\d{8})_(\d{8})\.csv$/.exec(basename(name));
  if (!match) return null;
  const table = TABLES.find((t) => t.name === `imported_${match[1]}`);
  const [first, last] = [compactDate(match[2]), compactDate(match[3])];
  if (!table || !validDate(first) || !validDate(last) || first > last) return null;
  return { table, first, last };
}

/** The header line's column names (read apart, so extra columns are noticed too). */
async function headerOf(input: InputFile): Promise<string[]> {
  const stream = await input.open();
  let head = '';
  try {
    for await (const chunk of stream) {
      head += (chunk as Buffer).toString('utf8');
      if (head.includes('\n') || head.length > 65_536) break;
    }
  } finally {
    stream.destroy();
  }
  const line = head.replace(/^\uFEFF/, '').split(/\r?\n/)[0];
  if (line.trim() === '') throw new ImportInputError(input.name, 1, 'the file has no header line');
  try {
    return (parse(line) as string[][])[0].map((column) => column.trim());
  } catch (err) {
    throw new ImportInputError(input.name, 1, `the header line is not CSV (${(err as Error).message})`);
  }
}

function checkHeader(file: ExportFile, header: readonly string[]): void {
  const expected = file.table.columns.map(([name]) => name);
  const missing = expected.filter((column) => !header.includes(column));
  const extra = header.filter((column) => !expected.includes(column));
  if (missing.length === 0 && extra.length === 0 && header.length === expected.length) return;
  const problems = [missing.length > 0 ? `missing ${missing.join(', ')}` : '', extra.length > 0 ? `unexpected ${extra.join(', ')}` : ''].filter(Boolean);
  throw new ImportInputError(file.input.name, 1, `the columns of ${file.table.name} are ${expected.join(', ')} (${problems.join('; ') || 'a column is repeated'}); found ${header.join(', ')}`);
}

/** A row's problem: the reason it is counted under, and the message quoting its value. */
interface RowProblem {
  reason: string;
  message: string;
}

/** One CSV record → the row to store, or why it is skipped. */
function readRow(file: ExportFile, record: Record<string, string>): { row: Row } | { problem: RowProblem } {
  const problem = (reason: string, message: string) => ({ problem: { reason, message } });
  const row: Row = {};
  for (const [column, kind] of file.table.columns) {
    const value = record[column];
    if (kind === 'date') {
      if (!validDate(value)) return problem('date is not a day written YYYY-MM-DD', `date "${value}" is not a day written YYYY-MM-DD`);
      if (value < file.first || value > file.last) {
        return problem('date outside the range of its file name', `date ${value} is outside ${file.first} … ${file.last}, the range of the file name`);
      }
      row.date = value;
    } else if (kind === 'text') {
      if (value.length > MAX_TEXT) return problem(`a value longer than ${MAX_TEXT} characters`, `${column} is ${value.length} characters long`);
      row[column] = value;
    } else if (kind === 'maybe_count' && (value === '' || value === '\\N')) {
      row[column] = null;
    } else {
      if (!/^\d+$/.test(value)) return problem('a count that is not a non-negative integer', `${column} is "${value.slice(0, 40)}", not a non-negative integer`);
      const count = Number(value);
      const max = kind === 'count32' ? 0xffff_ffff : Number.MAX_SAFE_INTEGER;
      if (!(count <= max)) return problem('a count too large', `${column} is ${value.slice(0, 40)}, larger than ${max}`);
      row[column] = count;
    }
  }
  file.table.normalise?.(row);
  return { row };
}

/** A manifest being filled in as the files are read. */
class Tally {
  readonly datasets = new Map<string, ImportDataset>();
  readonly skipped = new SkippedLog();
  readonly warnings: string[] = [];

  dataset(table: Table, file: string): ImportDataset {
    let dataset = this.datasets.get(table.name);
    if (!dataset) {
      dataset = { name: table.name, files: [], rows_scanned: 0, rows_accepted: 0, rows_skipped: 0, from: null, to: null };
      this.datasets.set(table.name, dataset);
    }
    if (!dataset.files.includes(file)) dataset.files.push(file);
    return dataset;
  }

  accept(dataset: ImportDataset, date: string): void {
    dataset.rows_scanned++;
    dataset.rows_accepted++;
    if (dataset.from === null || date < dataset.from) dataset.from = date;
    if (dataset.to === null || date > dataset.to) dataset.to = date;
  }

  skip(dataset: ImportDataset, file: string, line: number, problem: RowProblem): void {
    dataset.rows_scanned++;
    dataset.rows_skipped++;
    this.skipped.record(problem.reason, file, line, problem.message);
  }

  manifest(overlap: ImportManifest['overlap']): ImportManifest {
    const datasets = [...this.datasets.values()];
    const sum = (field: 'rows_scanned' | 'rows_accepted' | 'rows_skipped') => datasets.reduce((total, d) => total + d[field], 0);
    const froms = datasets.flatMap((d) => (d.from ? [d.from] : [])).sort();
    const tos = datasets.flatMap((d) => (d.to ? [d.to] : [])).sort();
    return {
      source: 'plausible',
      datasets,
      from: froms[0] ?? null,
      to: tos.at(-1) ?? null,
      rows_scanned: sum('rows_scanned'),
      rows_accepted: sum('rows_accepted'),
      rows_skipped: sum('rows_skipped'),
      skipped: this.skipped.list(),
      overlap,
      warnings: this.warnings,
    };
  }
}

/** The export's files among the inputs; the others are skipped with a warning. */
async function exportFiles(staged: readonly StagedFile[], tally: Tally): Promise<ExportFile[]> {
  const found: ExportFile[] = [];
  for (const input of await inputFiles(staged)) {
    const named = exportFileName(input.name);
    if (!named) {
      tally.warnings.push(`${input.name}: not a file of Plausible's CSV export (imported_<table>_<YYYYMMDD>_<YYYYMMDD>.csv); skipped`);
      continue;
    }
    const twin = found.find((f) => f.table === named.table && f.first <= named.last && named.first <= f.last);
    if (twin) tally.warnings.push(`${input.name} and ${twin.input.name} both hold ${named.table.name} for some of the same days: those days are counted twice`);
    found.push({ input, ...named });
  }
  if (found.length === 0) {
    const names = TABLES.map((t) => t.name.replace('imported_', '')).join(', ');
    throw new ImportInputError(staged[0]?.name ?? '', null, `no file of Plausible's CSV export found; expected names like imported_visitors_20240101_20241231.csv (tables: ${names})`);
  }
  return found;
}


/** Reads every export file, checking each row; with `write`, stores the accepted ones. */
async function readExport(staged: readonly StagedFile[], ctx: ImportContext, write: boolean): Promise<ImportManifest> {
  const tally = new Tally();
  const files = await exportFiles(staged, tally);
  let rowsRead = 0;
  for (const [index, file] of files.entries()) {
    checkHeader(file, await headerOf(file.input));
    const dataset = tally.dataset(file.table, file.input.name);
    const columns = file.table.columns.map(([name]) => name);
    let batch: Row[] = [];
    let batches = 0;
    const flush = async () => {
      if (batch.length === 0) return;
      ctx.signal.throwIfAborted();
      // The token names the batch by its place in the import, so sending it again stores nothing.
      const dedupToken = `plausible:${ctx.importId}:${index}:${batches++}`;
      await ctx.store.insert(file.table.name, batch, { database: ctx.site.tenant, dedupToken });
      batch = [];
      ctx.progress(rowsRead);
    };
    for await (const { line, record } of csvRecords(file.input, { columns, required: columns })) {
      rowsRead++;
      const read = readRow(file, record);
      if ('problem' in read) {
        tally.skip(dataset, file.input.name, line, read.problem);
        continue;
      }
      const { row } = read;
      tally.accept(dataset, String(row.date));
      if (!write) {
        if (rowsRead % BATCH_ROWS === 0) {
          ctx.signal.throwIfAborted();
          ctx.progress(rowsRead);
        }
        continue;
      }
      batch.push({ site_id: ctx.site.id, import_id: ctx.importId, ...row });
      if (batch.length >= BATCH_ROWS) await flush();
    }
    await flush();
  }
  ctx.progress(rowsRead, rowsRead);
  const manifest = tally.manifest({ days: 0, from: null, to: null });
  return { ...manifest, overlap: await nativeOverlap(ctx, manifest.from, manifest.to) };
}

export const plausibleSource: ImportSource = {
  id: 'plausible',
  kind: 'aggregate',
  label: 'Plausible',
  description:
    'The CSV export of a Plausible site (Site Settings → Imports & Exports → Export data): the zip as downloaded, or its CSV files. ' +
    'Daily totals per table; they fill the days of the stats that have no data collected by Plumb.',
  extensions: ['.zip', '.csv'],
  maxFiles: 20,
  validate: (files, ctx) => readExport(files, ctx, false),
  run: (files, ctx) => readExport(files, ctx, true),
};
