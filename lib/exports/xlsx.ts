// Spreadsheet (.xlsx) files written as their rows arrive: each sheet's XML is made here, a chunk of
// rows at a time, and deflated into the workbook's zip as it goes, so a sheet of a million rows
// never sits in memory whole. A table longer than Excel's sheet goes on in continuation sheets
// (`pageviews (2)`, `pageviews (3)`…), each with the header again. Reading goes through exceljs's
// streaming reader, with the workbook's parts put in the order it needs.
import { once } from 'node:events';
import { PassThrough, type Readable, type Writable } from 'node:stream';
import type ExcelJS from 'exceljs';
import { ZipFile } from 'yazl';
import { escapeHtml } from '../mail/html.ts';

/**
 * exceljs, loaded at the first spreadsheet read: with the zip, XML and polyfill libraries it brings
 * it is ~25 MiB of a node's heap and code, for a format most nodes never read.
 */
let excel: Promise<typeof ExcelJS> | undefined;
const loadExcel = () => (excel ??= import('exceljs').then((module) => module.default));

export const XLSX_CONTENT_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

/** Rows of one Excel sheet, its header included (Excel's own limit). */
export const XLSX_MAX_ROWS = 1_048_576;

/** Characters of sheet XML gathered before they are written to the zip. */
const CHUNK_CHARS = 256 * 1024;

/**
 * Deflate's level for the sheets: sheet XML repeats itself so much that level 1 makes a file ~15%
 * larger than the default level 6, written 1.75× as fast (200,000 pageview rows: 2.4 s against 4.2).
 */
const DEFLATE_LEVEL = 1;

export type CellValue = string | number | boolean | null;

export interface SheetSource {
  /** The sheet's name (at most 26 characters, so that ` (99)` still fits Excel's 31). */
  name: string;
  columns: readonly string[];
  rows: AsyncIterable<readonly CellValue[]>;
}

/** The name of the n-th sheet (1-based) of a table. */
export const sheetName = (name: string, part: number) => (part === 1 ? name : `${name} (${part})`);

const MAIN = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
const RELATIONSHIPS = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const XML_HEAD = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';

/** Characters XML 1.0 cannot hold at all (control characters, lone surrogates), dropped. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is dropped
const NOT_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
/** Anything that needs dropping or escaping; most values have none of it. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is looked for
const NEEDS_WORK = /[&<>"'\u0000-\u0008\u000B\u000C\u000E-\u001F\uD800-\uDFFF\uFFFE\uFFFF]/;

/** `text` as XML character data or an attribute value (HTML's escapes are XML's). */
export function xmlText(text: string): string {
  return NEEDS_WORK.test(text) ? escapeHtml(text.replace(NOT_XML, '')) : text;
}

/** A column's letters: 0 → A, 25 → Z, 26 → AA. */
export function columnLetters(index: number): string {
  let letters = '';
  for (let n = index + 1; n > 0; n = Math.floor((n - 1) / 26)) letters = String.fromCharCode(65 + ((n - 1) % 26)) + letters;
  return letters;
}

/**
 * One cell's XML, or '' for an empty one (every cell names its place, so the next keeps its column).
 * Text is an inline string with its spaces kept; a number that is not finite is written as text.
 */
function cellXml(ref: string, value: CellValue | undefined, style: string): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number' && Number.isFinite(value)) return `<c r="${ref}"${style}><v>${value}</v></c>`;
  if (typeof value === 'boolean') return `<c r="${ref}"${style} t="b"><v>${value ? 1 : 0}</v></c>`;
  return `<c r="${ref}"${style} t="inlineStr"><is><t xml:space="preserve">${xmlText(String(value))}</t></is></c>`;
}

/** The start of a sheet: its header row bold and frozen above the rows that scroll. */
function sheetStart(columns: readonly string[], letters: readonly string[]): string {
  const header = columns.map((name, i) => cellXml(`${letters[i]}1`, name, ' s="1"')).join('');
  return (
    `${XML_HEAD}<worksheet xmlns="${MAIN}" xmlns:r="${RELATIONSHIPS}">` +
    '<sheetViews><sheetView workbookViewId="0"><pane ySplit="1" topLeftCell="A2" activePane="bottomLeft" state="frozen"/></sheetView></sheetViews>' +
    `<sheetData><row r="1">${header}</row>`
  );
}
const SHEET_END = '</sheetData></worksheet>';

/** The parts beside the sheets: the workbook naming them, its relationships, content types and styles. */
function workbookParts(names: readonly string[]): [path: string, xml: string][] {
  const sheets = names.map((name, i) => `<sheet name="${xmlText(name)}" sheetId="${i + 1}" r:id="rId${i + 1}"/>`).join('');
  const sheetRels = names.map((_, i) => `<Relationship Id="rId${i + 1}" Type="${RELATIONSHIPS}/worksheet" Target="worksheets/sheet${i + 1}.xml"/>`).join('');
  const sheetTypes = names.map((_, i) => `<Override PartName="/xl/worksheets/sheet${i + 1}.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>`).join('');
  return [
    [
      '[Content_Types].xml',
      `${XML_HEAD}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
        '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>' +
        '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>' +
        '<Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/>' +
        `${sheetTypes}</Types>`,
    ],
    ['_rels/.rels', `${XML_HEAD}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${RELATIONSHIPS}/officeDocument" Target="xl/workbook.xml"/></Relationships>`],
    [
      'xl/_rels/workbook.xml.rels',
      `${XML_HEAD}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">${sheetRels}<Relationship Id="rId${names.length + 1}" Type="${RELATIONSHIPS}/styles" Target="styles.xml"/></Relationships>`,
    ],
    ['xl/workbook.xml', `${XML_HEAD}<workbook xmlns="${MAIN}" xmlns:r="${RELATIONSHIPS}"><bookViews><workbookView/></bookViews><sheets>${sheets}</sheets></workbook>`],
    [
      'xl/styles.xml',
      `${XML_HEAD}<styleSheet xmlns="${MAIN}">` +
        '<fonts count="2"><font><sz val="11"/><name val="Calibri"/><family val="2"/></font><font><b/><sz val="11"/><name val="Calibri"/><family val="2"/></font></fonts>' +
        '<fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills>' +
        '<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders>' +
        '<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>' +
        '<cellXfs count="2"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/><xf numFmtId="0" fontId="1" fillId="0" borderId="0" xfId="0" applyFont="1"/></cellXfs>' +
        '<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles></styleSheet>',
    ],
  ];
}

const READER_GONE = 'the reader of the workbook went away';

/**
 * Resolves at `event` on `emitter` (a sheet's stream draining, the zip ending), or throws once `out`
 * (the workbook's reader) has gone: its pipe from the zip then stops, and nothing would come.
 */
async function until(emitter: NodeJS.EventEmitter, event: string, out: Writable): Promise<void> {
  if (out.destroyed) throw new Error(READER_GONE);
  const settled = new AbortController();
  try {
    const gone = await Promise.race([once(emitter, event, { signal: settled.signal }).then(() => false), once(out, 'close', { signal: settled.signal }).then(() => true)]);
    if (gone && !out.writableFinished) throw new Error(READER_GONE);
  } finally {
    settled.abort();
  }
}

/** One sheet being written: its XML gathered into chunks and handed to the zip's deflate. */
class SheetWriter {
  private readonly stream = new PassThrough({ highWaterMark: 1024 * 1024 });
  private readonly letters: string[];
  private readonly out: Writable;
  private pending = '';
  private rowNumber = 1;

  constructor(zip: ZipFile, index: number, columns: readonly string[], out: Writable) {
    this.out = out;
    this.letters = columns.map((_, i) => columnLetters(i));
    zip.addReadStream(this.stream, `xl/worksheets/sheet${index}.xml`, { compressionLevel: DEFLATE_LEVEL });
    this.pending = sheetStart(columns, this.letters);
  }

  /** Adds a row; waits when the zip or the reader is behind. */
  async add(row: readonly CellValue[]): Promise<void> {
    const n = ++this.rowNumber;
    let xml = `<row r="${n}">`;
    for (let i = 0; i < this.letters.length; i++) xml += cellXml(`${this.letters[i]}${n}`, row[i], '');
    this.pending += `${xml}</row>`;
    if (this.pending.length >= CHUNK_CHARS) await this.flush();
  }

  async end(): Promise<void> {
    this.pending += SHEET_END;
    await this.flush();
    this.stream.end();
  }

  private async flush(): Promise<void> {
    if (this.out.destroyed) throw new Error(READER_GONE);
    const chunk = this.pending;
    this.pending = '';
    if (!this.stream.write(chunk)) await until(this.stream, 'drain', this.out);
  }
}

/**
 * Writes the sheets, in order, as one workbook into `out` and ends it; answers how many data rows
 * each table had (headers not counted). `maxRows` (header included) is Excel's limit unless a test
 * asks for a smaller one. Waits for the reader of `out` whenever it falls behind, so a slow
 * client holds the rows back instead of the writer buffering them.
 */
export async function writeWorkbook(out: PassThrough, sheets: Iterable<SheetSource> | AsyncIterable<SheetSource>, maxRows = XLSX_MAX_ROWS): Promise<Map<string, number>> {
  if (maxRows < 2) throw new RangeError('a sheet holds at least a header and one row');
  const zip = new ZipFile();
  // The zip's own errors (none expected from buffers and streams made here) end the download.
  zip.on('error', (error: Error) => out.destroy(error));
  zip.outputStream.pipe(out);
  const names: string[] = [];
  const open = (name: string, columns: readonly string[]) => {
    names.push(name);
    return new SheetWriter(zip, names.length, columns, out);
  };
  const counts = new Map<string, number>();
  for await (const sheet of sheets) {
    let part = 1;
    let writer = open(sheetName(sheet.name, part), sheet.columns);
    let inSheet = 1;
    let total = 0;
    for await (const row of sheet.rows) {
      if (inSheet === maxRows) {
        await writer.end();
        part++;
        writer = open(sheetName(sheet.name, part), sheet.columns);
        inSheet = 1;
      }
      await writer.add(row);
      inSheet++;
      total++;
    }
    await writer.end();
    counts.set(sheet.name, total);
  }
  for (const [path, xml] of workbookParts(names)) zip.addBuffer(Buffer.from(xml), path);
  zip.end();
  // Done once the zip's last byte went into `out`.
  if (!(zip.outputStream as Readable).readableEnded) await until(zip.outputStream, 'end', out);
  return counts;
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
