// Spreadsheet (.xlsx) files written as their rows arrive: exceljs's streaming writer commits each
// row as it is added, and its zip goes into the stream the caller sends out, so a sheet of a
// million rows never sits in memory whole. A table longer than Excel's sheet goes on in
// continuation sheets (`pageviews (2)`, `pageviews (3)`…), each with the header again. Reading
// goes through exceljs's streaming reader too, with the workbook's parts put in the order it needs.
import { once } from 'node:events';
import type { PassThrough, Readable } from 'node:stream';
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import type ExcelJS from 'exceljs';
import { ZipFile } from 'yazl';

/**
 * exceljs, loaded at the first spreadsheet: with the zip, XML and polyfill libraries it brings it
 * is ~9 MiB of every node's heap (and its code), for a format most nodes never write.
 */
let excel: Promise<typeof ExcelJS> | undefined;
const loadExcel = () => (excel ??= import('exceljs').then((module) => module.default));

export const XLSX_CONTENT_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

/** Rows of one Excel sheet, its header included (Excel's own limit). */
export const XLSX_MAX_ROWS = 1_048_576;

/** Rows added between two looks at whether the reader keeps up. */
const ROWS_PER_CHECK = 1000;

export type CellValue = string | number | boolean | null;

export interface SheetSource {
  /** The sheet's name (at most 26 characters, so that ` (99)` still fits Excel's 31). */
  name: string;
  columns: readonly string[];
  rows: AsyncIterable<readonly CellValue[]>;
}

/** The name of the n-th sheet (1-based) of a table. */
export const sheetName = (name: string, part: number) => (part === 1 ? name : `${name} (${part})`);

/**
 * Writes the sheets, in order, as one workbook into `out` and ends it; answers how many data rows
 * each table had (headers not counted). `maxRows` (header included) is Excel's limit unless a test
 * asks for a smaller one. Waits for the reader of `out` whenever it falls behind, so a slow
 * client holds the rows back instead of the writer buffering them.
 */
export async function writeWorkbook(out: PassThrough, sheets: Iterable<SheetSource> | AsyncIterable<SheetSource>, maxRows = XLSX_MAX_ROWS): Promise<Map<string, number>> {
  if (maxRows < 2) throw new RangeError('a sheet holds at least a header and one row');
  const workbook = new (await loadExcel()).stream.xlsx.WorkbookWriter({ stream: out, useSharedStrings: false, useStyles: false });
  const counts = new Map<string, number>();
  for await (const sheet of sheets) {
    let part = 1;
    let worksheet = workbook.addWorksheet(sheetName(sheet.name, part));
    worksheet.addRow([...sheet.columns]).commit();
    let inSheet = 1;
    let total = 0;
    for await (const row of sheet.rows) {
      if (out.destroyed) throw new Error('the reader of the workbook went away');
      if (inSheet === maxRows) {
        worksheet.commit();
        part++;
        worksheet = workbook.addWorksheet(sheetName(sheet.name, part));
        worksheet.addRow([...sheet.columns]).commit();
        inSheet = 1;
      }
      worksheet.addRow(row as CellValue[]).commit();
      inSheet++;
      total++;
      if (total % ROWS_PER_CHECK === 0) await keepUp(out, worksheet);
    }
    worksheet.commit();
    counts.set(sheet.name, total);
  }
  await workbook.commit();
  return counts;
}

/** Bytes of sheet XML waiting for the zip writer's deflate beyond which rows are held back. */
const MAX_PENDING_BYTES = 1024 * 1024;

/**
 * Bytes a sheet has written that the zip writer has not compressed yet. exceljs writes a sheet's
 * XML into the zip writer's input without waiting for it (its own buffer pipes on regardless), so
 * when deflate is slower than the rows come, that input grows without bound: 200,000 rows held
 * ~75 MiB of XML until the workbook ended. Its size is read from the input stream's state (the
 * readable-stream PassThrough archiver reads from), 0 if that is not there.
 */
function pendingBytes(worksheet: ExcelJS.Worksheet): number {
  const sink = (worksheet as unknown as { stream?: { pipes?: { _readableState?: { length?: number }; _writableState?: { length?: number } }[] } }).stream?.pipes?.[0];
  return (sink?._readableState?.length ?? 0) + (sink?._writableState?.length ?? 0);
}

/** Lets the zip writer pass on what it has, and waits while it or the reader is behind. */
async function keepUp(out: PassThrough, worksheet: ExcelJS.Worksheet): Promise<void> {
  await nextTurn();
  while (pendingBytes(worksheet) > MAX_PENDING_BYTES && !out.destroyed) await sleep(2);
  while (out.writableNeedDrain && !out.destroyed) {
    const settled = new AbortController();
    try {
      await Promise.race([once(out, 'drain', { signal: settled.signal }), once(out, 'close', { signal: settled.signal })]);
    } finally {
      settled.abort();
    }
  }
}

/** One part (zip entry) of an .xlsx file. */
export interface XlsxPart {
  name: string;
  open(): Promise<Readable>;
}

export interface SheetRows {
  name: string;
  /** Each row's values from the first column on; empty cells are undefined, trailing ones absent. */
  rows: AsyncIterable<unknown[]>;
}

/** Parts exceljs's reader must have seen before any sheet to name the sheets and read them as they stream. */
const FIRST_PARTS = ['[Content_Types].xml', '_rels/.rels', 'xl/_rels/workbook.xml.rels', 'xl/workbook.xml', 'xl/sharedStrings.xml', 'xl/styles.xml'];
const EMPTY_SHARED_STRINGS = Buffer.from('<?xml version="1.0" encoding="UTF-8" standalone="yes"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="0" uniqueCount="0"/>');
const sheetNumber = (name: string) => Number(/^xl\/worksheets\/sheet(\d+)\.xml$/.exec(name)?.[1] ?? Number.NaN);

/**
 * The sheets of a workbook in order, each read row by row as it streams. exceljs's streaming
 * reader reads the zip front to back and names the sheets (and reads them as they come, rather
 * than parking each in a temporary file, where it loses some) only once it has seen the workbook
 * and its shared strings, which writers (exceljs's among them) put last: the parts are therefore
 * fed to it again in that order, stored uncompressed, with an empty shared-strings part if the
 * workbook has none, one sheet at a time. A sheet's rows must be read before the next sheet is asked for.
 */
export async function* readSheets(parts: readonly XlsxPart[]): AsyncIterable<SheetRows> {
  const { WorkbookReader } = (await loadExcel()).stream.xlsx;
  const byName = new Map(parts.map((part) => [part.name, part]));
  const sheets = parts.filter((part) => Number.isFinite(sheetNumber(part.name))).sort((a, b) => sheetNumber(a.name) - sheetNumber(b.name));
  // One reader per sheet: fed the whole workbook at once, exceljs's reader now and then skipped a
  // small sheet while the one before it was read slowly (an import inserting its rows). With one
  // sheet in its zip, a sheet it does not give back is an error, never a sheet quietly missing.
  for (const sheet of sheets) {
    const zip = new ZipFile();
    const add = (part: XlsxPart) =>
      zip.addReadStreamLazy(part.name, { compress: false }, (done) =>
        part.open().then(
          (stream) => done(null, stream),
          (error: Error) => done(error, undefined as unknown as Readable),
        ),
      );
    for (const name of FIRST_PARTS) {
      const part = byName.get(name);
      if (part) add(part);
      else if (name === 'xl/sharedStrings.xml') zip.addBuffer(EMPTY_SHARED_STRINGS, name, { compress: false });
    }
    add(sheet);
    zip.end();
    const reader = new WorkbookReader(zip.outputStream as Readable, { worksheets: 'emit', sharedStrings: 'cache', hyperlinks: 'ignore', styles: 'ignore', entries: 'ignore' });
    let given = 0;
    for await (const worksheet of reader) {
      given++;
      const read = worksheet as unknown as AsyncIterable<{ values: unknown[] }> & { name: string };
      yield {
        name: read.name,
        rows: (async function* () {
          for await (const row of read) yield (row.values ?? []).slice(1);
        })(),
      };
    }
    if (given === 0) throw new Error(`${sheet.name}: the spreadsheet reader found no sheet in it`);
  }
}
