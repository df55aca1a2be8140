// Reading uploaded files safely: a staged file as itself, a .gz as its decompressed bytes, a .zip
// as its entries (refusing names that leave the folder, bombs, too many entries, damaged archives),
// with the size limits enforced while the bytes stream and not only from what headers claim; and
// CSV records of such a file with their line numbers, the header checked first.
import { createReadStream } from 'node:fs';
import { open as openFile } from 'node:fs/promises';
import { type Readable, Transform, type TransformCallback } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { CsvError, parse } from 'csv-parse';
import yauzl from 'yauzl';
import { ImportInputError, type StagedFile } from './source.ts';

export interface ZipLimits {
  maxEntries: number;
  /** Uncompressed bytes of one entry (or of a decompressed .gz). */
  maxEntryBytes: number;
  /** Uncompressed bytes of all entries of one archive together. */
  maxTotalBytes: number;
  /** Uncompressed:compressed beyond this, on an entry larger than bombMinBytes, is a bomb. */
  maxRatio: number;
  bombMinBytes: number;
}

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

export const DEFAULT_ZIP_LIMITS: ZipLimits = {
  maxEntries: 10_000,
  maxEntryBytes: 4 * GiB,
  maxTotalBytes: 8 * GiB,
  maxRatio: 200,
  bombMinBytes: MiB,
};

export interface InputFile {
  /** The entry's path inside its archive, or the staged file's name (without .gz). */
  name: string;
  /** Uncompressed size as the archive declares it (enforced while reading). */
  size: number;
  /** The bytes; a stream that fails with ImportInputError if a limit is crossed or the archive is damaged. */
  open(): Promise<Readable>;
}

/** Each staged file as the inputs it holds: itself, its decompressed bytes (.gz), or its entries (.zip). */
export async function inputFiles(staged: readonly StagedFile[], limits: Partial<ZipLimits> = {}): Promise<InputFile[]> {
  const lim = { ...DEFAULT_ZIP_LIMITS, ...limits };
  const out: InputFile[] = [];
  for (const file of staged) {
    const lower = file.name.toLowerCase();
    if (lower.endsWith('.zip')) out.push(...(await zipEntries(file, lim)));
    else if (lower.endsWith('.gz')) out.push(await gzipInput(file, lim));
    else out.push({ name: file.name, size: file.size, open: async () => createReadStream(file.path) });
  }
  return out;
}

interface ZipEntryInfo {
  name: string;
  /** Position in the central directory, to find it again on open(). */
  position: number;
  size: number;
}

function openZip(file: StagedFile): Promise<yauzl.ZipFile> {
  return new Promise((resolve, reject) => {
    // Names are decoded and checked here rather than by yauzl, so the refusal says which entry and why.
    yauzl.open(file.path, { lazyEntries: true, autoClose: false, decodeStrings: false, validateEntrySizes: true }, (err, zip) => {
      if (err) reject(damaged(file.name, err));
      else resolve(zip);
    });
  });
}

const damaged = (zipName: string, err: Error) =>
  err instanceof ImportInputError ? err : new ImportInputError(zipName, null, `not a readable zip archive (${err.message})`);

/** Walks the central directory, calling visit for each entry until it returns false. */
function walkEntries(zipName: string, zip: yauzl.ZipFile, visit: (entry: yauzl.Entry, name: string, position: number) => boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    let position = 0;
    zip.on('error', (err: Error) => reject(damaged(zipName, err)));
    zip.on('end', () => resolve());
    zip.on('entry', (entry: yauzl.Entry) => {
      try {
        const name = yauzl.getFileNameLowLevel(entry.generalPurposeBitFlag, entry.fileName as unknown as Buffer, entry.extraFields, false);
        if (visit(entry, name, position++)) zip.readEntry();
        else resolve();
      } catch (err) {
        reject(damaged(zipName, err as Error));
      }
    });
    zip.readEntry();
  });
}

function entryNameProblem(name: string): string | null {
  if (name === '') return 'has an empty name';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'has control characters in its name';
  if (name.startsWith('/') || /^[a-zA-Z]:/.test(name)) return 'has an absolute path';
  if (name.split('/').includes('..')) return 'climbs out of the archive folder (..)';
  return null;
}

async function zipEntries(file: StagedFile, lim: ZipLimits): Promise<InputFile[]> {
  const zip = await openZip(file);
  const entries: ZipEntryInfo[] = [];
  let total = 0;
  try {
    if (zip.entryCount > lim.maxEntries) {
      throw new ImportInputError(file.name, null, `the archive has ${zip.entryCount} entries; at most ${lim.maxEntries} are accepted`);
    }
    await walkEntries(file.name, zip, (entry, name, position) => {
      const problem = entryNameProblem(name);
      if (problem) throw new ImportInputError(file.name, null, `entry "${name}" ${problem}`);
      if (name.endsWith('/')) return true;
      const size = entry.uncompressedSize;
      if (size > lim.maxEntryBytes) {
        throw new ImportInputError(file.name, null, `entry "${name}" is ${size} bytes uncompressed; at most ${lim.maxEntryBytes} are accepted`);
      }
      if (size > lim.bombMinBytes && size / Math.max(entry.compressedSize, 1) > lim.maxRatio) {
        throw new ImportInputError(file.name, null, `entry "${name}" expands ${Math.round(size / Math.max(entry.compressedSize, 1))} times; refused as a zip bomb`);
      }
      total += size;
      if (total > lim.maxTotalBytes) {
        throw new ImportInputError(file.name, null, `the archive's entries exceed ${lim.maxTotalBytes} bytes uncompressed together`);
      }
      entries.push({ name, position, size });
      return true;
    });
  } finally {
    zip.close();
  }
  return entries.map((e) => ({ name: e.name, size: e.size, open: () => openEntry(file, e, lim) }));
}

async function openEntry(file: StagedFile, info: ZipEntryInfo, lim: ZipLimits): Promise<Readable> {
  const zip = await openZip(file);
  try {
    let found: yauzl.Entry | null = null;
    await walkEntries(file.name, zip, (entry, _name, position) => {
      if (position !== info.position) return true;
      found = entry;
      return false;
    });
    if (!found) throw new ImportInputError(file.name, null, `entry "${info.name}" disappeared from the archive`);
    const entry: yauzl.Entry = found;
    const raw = await new Promise<Readable>((resolve, reject) =>
      zip.openReadStream(entry, (err, stream) => (err ? reject(damaged(file.name, err)) : resolve(stream))),
    );
    const limited = raw.pipe(new ByteLimit(info.name, Math.min(info.size, lim.maxEntryBytes), null));
    raw.on('error', (err: Error) => limited.destroy(damaged(file.name, err)));
    limited.on('close', () => zip.close());
    return limited;
  } catch (err) {
    zip.close();
    throw err;
  }
}

/** A .gz stands for the file inside it; its size is the one its trailer declares (mod 4 GiB, so only a hint). */
async function gzipInput(file: StagedFile, lim: ZipLimits): Promise<InputFile> {
  const name = file.name.slice(0, -'.gz'.length);
  let declared = 0;
  if (file.size >= 4) {
    const fh = await openFile(file.path, 'r');
    try {
      const buf = Buffer.alloc(4);
      await fh.read(buf, 0, 4, file.size - 4);
      declared = buf.readUInt32LE(0);
    } finally {
      await fh.close();
    }
  }
  return {
    name,
    size: declared,
    open: async () => {
      const compressed = createReadStream(file.path);
      const counter = { bytes: 0 };
      compressed.on('data', (chunk: Buffer) => {
        counter.bytes += chunk.length;
      });
      const gunzip = createGunzip();
      const limited = compressed.pipe(gunzip).pipe(new ByteLimit(name, lim.maxEntryBytes, { counter, lim }));
      gunzip.on('error', (err: Error) => limited.destroy(new ImportInputError(file.name, null, `not a readable gzip file (${err.message})`)));
      compressed.on('error', (err: Error) => limited.destroy(err));
      return limited;
    },
  };
}

/** Passes bytes through, failing once more than max have gone by, or (for streams with no declared size) once they expand like a bomb. */
class ByteLimit extends Transform {
  private seen = 0;
  private readonly name: string;
  private readonly max: number;
  private readonly ratio: { counter: { bytes: number }; lim: ZipLimits } | null;

  constructor(name: string, max: number, ratio: { counter: { bytes: number }; lim: ZipLimits } | null) {
    super();
    this.name = name;
    this.max = max;
    this.ratio = ratio;
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.seen += chunk.length;
    if (this.seen > this.max) {
      done(new ImportInputError(this.name, null, `holds more than ${this.max} bytes uncompressed`));
      return;
    }
    if (this.ratio && this.seen > this.ratio.lim.bombMinBytes && this.seen / Math.max(this.ratio.counter.bytes, 1) > this.ratio.lim.maxRatio) {
      done(new ImportInputError(this.name, null, `expands more than ${this.ratio.lim.maxRatio} times; refused as a compression bomb`));
      return;
    }
    done(null, chunk);
  }
}

export interface CsvOptions {
  /** The columns read; any others in the file are ignored, and missing optional ones read as ''. */
  columns: readonly string[];
  /** Columns the header must have. */
  required?: readonly string[];
}

/** What the parser gives with info and raw on. */
type ParsedRow = { record: string[]; raw: string; info: { lines: number } };

/** A single record longer than this is refused rather than buffered (an unclosed quote would swallow the file). */
const MAX_RECORD_BYTES = MiB;

/**
 * The records of a CSV file with a header line, each with the line it starts on (the header is
 * line 1). A header without a required column, or malformed CSV, throws ImportInputError naming
 * the file and the line.
 */
export async function* csvRecords(file: InputFile, options: CsvOptions): AsyncIterable<{ line: number; record: Record<string, string> }> {
  const input = await file.open();
  // The parser runs ahead of the loop below and its error can arrive before the records parsed
  // ahead of it; on_record sees every record in order, so the header width and the line of the
  // last good record are known when an error has to name a line.
  let width = -1;
  let lastLine = 0;
  const parser = parse({
    bom: true,
    relax_column_count: false,
    skip_empty_lines: true,
    info: true,
    raw: true,
    max_record_size: MAX_RECORD_BYTES,
    on_record: (item, context) => {
      // Typed as the bare record, but with info on it is the wrapped one.
      if (width < 0) width = (item as unknown as ParsedRow).record.length;
      lastLine = context.lines;
      return item;
    },
  });
  input.on('error', (err: Error) => parser.destroy(err));
  input.pipe(parser);
  let indexes: [string, number][] | null = null;
  try {
    for await (const item of parser as AsyncIterable<ParsedRow>) {
      if (indexes === null) {
        const header = item.record.map((h) => h.trim());
        const missing = (options.required ?? []).filter((c) => !header.includes(c));
        if (missing.length > 0) {
          throw new ImportInputError(
            file.name,
            1,
            `missing column${missing.length > 1 ? 's' : ''} ${missing.join(', ')}; found ${header.join(', ')}`,
          );
        }
        indexes = options.columns.map((c) => [c, header.indexOf(c)]);
        continue;
      }
      const record: Record<string, string> = {};
      for (const [column, index] of indexes) record[column] = index < 0 ? '' : (item.record[index] ?? '');
      yield { line: startLine(item.info.lines, item.raw), record };
    }
  } catch (err) {
    throw csvProblem(file.name, err, width, lastLine + 1);
  } finally {
    input.destroy();
    parser.destroy();
  }
  if (indexes === null) throw new ImportInputError(file.name, 1, 'the file is empty; a header line is required');
}

/**
 * csv-parse counts the line a record ends on; a record with quoted newlines starts earlier. Its raw
 * text also carries the blank lines skipped before it and its own line ending, which are not inside it.
 */
function startLine(endLine: number, raw: string): number {
  const own = raw.replace(/^(\r?\n)+/, '').replace(/\r?\n$/, '');
  return endLine - (own.match(/\n/g) ?? []).length;
}

/** recordStart: where the record being parsed began (the line after the last good one), for errors found only at its end. */
function csvProblem(name: string, err: unknown, width: number, recordStart: number): Error {
  if (err instanceof ImportInputError) return err;
  if (!(err instanceof CsvError)) return err as Error;
  const at = (err as CsvError & { lines?: number }).lines ?? null;
  switch (err.code) {
    case 'CSV_QUOTE_NOT_CLOSED':
      return new ImportInputError(name, recordStart, 'a quoted field is never closed');
    case 'CSV_RECORD_INCONSISTENT_FIELDS_LENGTH': {
      const found = (err as CsvError & { record?: unknown[] }).record?.length;
      return new ImportInputError(name, at, `expected ${width} fields like the header, found ${found ?? 'a different number'}`);
    }
    case 'CSV_MAX_RECORD_SIZE':
      return new ImportInputError(name, recordStart, `a record is longer than ${MAX_RECORD_BYTES} bytes (an unclosed quote?)`);
    default:
      return new ImportInputError(name, at, `malformed CSV (${err.message})`);
  }
}
