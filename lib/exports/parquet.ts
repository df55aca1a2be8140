// One Parquet file of any number of rows, written a slice at a time. ClickHouse writes each slice
// of the query (lib/exports/slices.ts) as a small Parquet file of its own, so the engine never
// sorts or encodes more than one slice; its row groups are then sent on as they are and the files'
// footers joined into one at the end, with each column chunk's offsets moved to where its bytes
// landed. A Parquet file is its column chunks' bytes after `PAR1` (ClickHouse follows each with a
// copy of its metadata), then a footer that says where each one starts, so nothing else in the
// bytes has to change. Page indexes and bloom filters, which ClickHouse writes after the last
// row group, hold offsets of their own: they are not copied, nor the footer's references to them.
import { createReadStream } from 'node:fs';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AnalyticsStore } from '../stores/analytics/index.ts';
import { afterSlice, eachSlice, type Slice, type SlicedQuery } from './slices.ts';
import { decodeStruct, encodeStruct, field, type ThriftList, type ThriftStruct, TYPE } from './thrift-compact.ts';

const MAGIC = Buffer.from('PAR1');

// Field ids of parquet.thrift (apache/parquet-format).
const FILE = { schema: 2, numRows: 3, rowGroups: 4 } as const;
const ROW_GROUP = { columns: 1, fileOffset: 5, ordinal: 7 } as const;
const CHUNK = { fileOffset: 2, metaData: 3, offsetIndexOffset: 4, offsetIndexLength: 5, columnIndexOffset: 6, columnIndexLength: 7 } as const;
const COLUMN = { totalCompressedSize: 7, dataPageOffset: 9, indexPageOffset: 10, dictionaryPageOffset: 11, bloomFilterOffset: 14, bloomFilterLength: 15 } as const;

export class ParquetStitchError extends Error {}

/**
 * The query's rows as one Parquet file, slice after slice; its bytes are the same whether read at
 * once or in parts. `onRows` hears each slice's row count as its bytes go out. Break to cancel:
 * the slice being written finishes, then its file and the folder are removed.
 */
export function slicedParquet(store: AnalyticsStore, query: SlicedQuery, onRows: (rows: number) => void = () => undefined): AsyncIterable<Uint8Array> {
  return eachSlice(store, query, (slices) => stitched(store, query, slices, onRows));
}

async function* stitched(store: AnalyticsStore, query: SlicedQuery, slices: Slice[], onRows: (rows: number) => void): AsyncIterable<Uint8Array> {
  // No rows: one empty slice still gives the file its schema.
  const empty = query.range?.from ?? new Date(0);
  if (slices.length === 0) slices.push({ from: empty, to: empty });
  const dir = await mkdtemp(join(tmpdir(), 'plumb-parquet-'));
  try {
    const footer = new StitchedFooter();
    let position = MAGIC.length;
    for (const [index, slice] of slices.entries()) {
      const file = join(dir, `slice-${index}.parquet`);
      await store.exportParquet(query.sql, { ...query.params, ...slice }, file);
      const { metadata, footerStart } = await readFooter(file);
      const chunks = chunkSpan(metadata, footerStart);
      const rows = footer.add(metadata, position - chunks.start);
      if (index === 0) yield MAGIC;
      if (chunks.end > chunks.start) yield* createReadStream(file, { start: chunks.start, end: chunks.end - 1, highWaterMark: 1 << 20 });
      position += chunks.end - chunks.start;
      await rm(file, { force: true });
      onRows(rows);
      afterSlice();
    }
    const encoded = encodeStruct(footer.metadata());
    const length = Buffer.alloc(4);
    length.writeUInt32LE(encoded.length);
    yield Buffer.concat([encoded, length, MAGIC]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A Parquet file's decoded footer and where it starts. */
async function readFooter(file: string): Promise<{ metadata: ThriftStruct; footerStart: number }> {
  const handle = await open(file);
  try {
    const { size } = await handle.stat();
    const tail = Buffer.alloc(8);
    if (size < 12 || (await handle.read(tail, 0, 8, size - 8)).bytesRead !== 8 || !tail.subarray(4).equals(MAGIC)) throw new ParquetStitchError('a slice is not a Parquet file');
    const length = tail.readUInt32LE(0);
    const footerStart = size - 8 - length;
    if (footerStart < MAGIC.length) throw new ParquetStitchError('a slice has a footer longer than the file');
    const bytes = Buffer.alloc(length);
    await handle.read(bytes, 0, length, footerStart);
    return { metadata: decodeStruct(bytes).struct, footerStart };
  } finally {
    await handle.close();
  }
}

/**
 * Where a file's row groups start and end: from the first column chunk to the first page index or
 * bloom filter after the last one (or the footer), so the copy of each chunk's metadata that
 * follows it comes along. A file without rows: an empty span.
 */
function chunkSpan(metadata: ThriftStruct, footerStart: number): { start: number; end: number } {
  let start = Infinity;
  let chunksEnd = 0;
  let end = footerStart;
  const offset = (struct: ThriftStruct, id: number) => Number((field(struct, id)?.value as bigint | undefined) ?? 0n);
  for (const rowGroup of rowGroupsOf(metadata)) {
    for (const chunk of (field(rowGroup, ROW_GROUP.columns)!.value as ThriftList).items as ThriftStruct[]) {
      const metaData = field(chunk, CHUNK.metaData)!.value as ThriftStruct;
      const first = offset(metaData, COLUMN.dictionaryPageOffset) || offset(metaData, COLUMN.dataPageOffset);
      start = Math.min(start, first);
      chunksEnd = Math.max(chunksEnd, first + offset(metaData, COLUMN.totalCompressedSize));
      for (const index of [offset(chunk, CHUNK.offsetIndexOffset), offset(chunk, CHUNK.columnIndexOffset), offset(metaData, COLUMN.bloomFilterOffset)]) {
        if (index > 0) end = Math.min(end, index);
      }
    }
  }
  if (chunksEnd === 0) return { start: MAGIC.length, end: MAGIC.length };
  if (end < chunksEnd) throw new ParquetStitchError('a slice has an index or bloom filter between its row groups');
  return { start, end };
}

const rowGroupsOf = (metadata: ThriftStruct) => ((field(metadata, FILE.rowGroups)?.value as ThriftList | undefined)?.items ?? []) as ThriftStruct[];

/** The footers of the slices joined: the first one's schema and key-values, every row group. */
class StitchedFooter {
  private first: ThriftStruct | undefined;
  private schema: Buffer | undefined;
  private readonly rowGroups: ThriftStruct[] = [];
  private rows = 0n;

  /** Adds a slice's row groups, its bytes moved by `shift`; answers the slice's row count. */
  add(metadata: ThriftStruct, shift: number): number {
    const schema = Buffer.from(encodeStruct([field(metadata, FILE.schema)!]));
    if (!this.schema) {
      this.first = metadata;
      this.schema = schema;
    } else if (!schema.equals(this.schema)) throw new ParquetStitchError('the slices of one export have different schemas');
    const rows = field(metadata, FILE.numRows)?.value as bigint;
    this.rows += rows;
    for (const rowGroup of rowGroupsOf(metadata)) {
      this.rowGroups.push(movedRowGroup(rowGroup, BigInt(shift), this.rowGroups.length));
    }
    return Number(rows);
  }

  metadata(): ThriftStruct {
    return this.first!.map((f) => {
      if (f.id === FILE.numRows) return { ...f, value: this.rows };
      if (f.id === FILE.rowGroups) return { ...f, value: { elementType: TYPE.struct, items: this.rowGroups } };
      return f;
    });
  }
}

function movedRowGroup(rowGroup: ThriftStruct, shift: bigint, ordinal: number): ThriftStruct {
  return rowGroup.map((f) => {
    if (f.id === ROW_GROUP.fileOffset) return moved(f, shift);
    if (f.id === ROW_GROUP.ordinal) return { ...f, value: ordinal };
    if (f.id !== ROW_GROUP.columns) return f;
    const columns = f.value as ThriftList;
    return { ...f, value: { ...columns, items: (columns.items as ThriftStruct[]).map((chunk) => movedChunk(chunk, shift)) } };
  });
}

const INDEX_FIELDS: ReadonlySet<number> = new Set([CHUNK.offsetIndexOffset, CHUNK.offsetIndexLength, CHUNK.columnIndexOffset, CHUNK.columnIndexLength]);
const BLOOM_FIELDS: ReadonlySet<number> = new Set([COLUMN.bloomFilterOffset, COLUMN.bloomFilterLength]);
const PAGE_OFFSETS: ReadonlySet<number> = new Set([COLUMN.dataPageOffset, COLUMN.indexPageOffset, COLUMN.dictionaryPageOffset]);

/** A column chunk with its pages' offsets moved; references to page indexes or bloom filters, were any written, are dropped. */
function movedChunk(chunk: ThriftStruct, shift: bigint): ThriftStruct {
  return chunk
    .filter((f) => !INDEX_FIELDS.has(f.id))
    .map((f) => {
      if (f.id === CHUNK.fileOffset) return moved(f, shift);
      if (f.id !== CHUNK.metaData) return f;
      const metaData = (f.value as ThriftStruct).filter((m) => !BLOOM_FIELDS.has(m.id)).map((m) => (PAGE_OFFSETS.has(m.id) ? moved(m, shift) : m));
      return { ...f, value: metaData };
    });
}

/** An offset field moved by `shift`; 0 (a writer's "not set") stays 0. */
function moved(f: ThriftStruct[number], shift: bigint): ThriftStruct[number] {
  if (f.type !== TYPE.i64) throw new ParquetStitchError(`an offset field (${f.id}) that is not a 64-bit integer`);
  const value = f.value as bigint;
  return value > 0n ? { ...f, value: value + shift } : f;
}
