// Reading uploaded import files: zip entries with every hostile archive refused by name, gzip, and
// CSV records with their line numbers and clear errors for a wrong header or broken quoting.
import { zipOf } from '../support/zip.ts';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { csvRecords, type InputFile, inputFiles } from '../../lib/imports/files.ts';
import { ImportInputError, type StagedFile } from '../../lib/imports/source.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'plumb-import-files-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});


/** yazl refuses hostile names, so the archive is built with a harmless name of the same length and the bytes renamed. */
function renameEntry(zip: Buffer, from: string, to: string): Buffer {
  expect(from.length).toBe(to.length);
  const out = Buffer.from(zip);
  let at = out.indexOf(from);
  expect(at).toBeGreaterThan(-1);
  while (at !== -1) {
    out.write(to, at, 'latin1');
    at = out.indexOf(from, at + 1);
  }
  return out;
}

let n = 0;
async function stage(name: string, bytes: Buffer | string): Promise<StagedFile> {
  const path = join(dir, `staged-${n++}`);
  await writeFile(path, bytes);
  return { name, path, size: Buffer.byteLength(bytes) };
}

async function readAll(stream: Readable): Promise<string> {
  const parts: Buffer[] = [];
  for await (const c of stream) parts.push(c as Buffer);
  return Buffer.concat(parts).toString('utf8');
}

const memoryFile = (name: string, text: string): InputFile => ({
  name,
  size: Buffer.byteLength(text),
  open: async () => (await import('node:stream')).Readable.from([Buffer.from(text)]),
});

async function records(file: InputFile, columns: string[], required = columns) {
  const out: { line: number; record: Record<string, string> }[] = [];
  for await (const r of csvRecords(file, { columns, required })) out.push(r);
  return out;
}

describe('inputFiles', () => {
  it('gives a plain file as itself', async () => {
    const [file] = await inputFiles([await stage('pages.csv', 'a\n1\n')]);
    expect(file.name).toBe('pages.csv');
    expect(file.size).toBe(4);
    expect(await readAll(await file.open())).toBe('a\n1\n');
  });

  it('gives a zip as its entries, skipping directories, each readable more than once', async () => {
    const zip = await zipOf([
      ['export/', ''],
      ['export/visitors.csv', 'date,visitors\n2024-01-01,3\n'],
      ['export/pages.csv', 'page\n/\n'],
    ]);
    const files = await inputFiles([await stage('export.zip', zip)]);
    expect(files.map((f) => [f.name, f.size])).toEqual([
      ['export/visitors.csv', 27],
      ['export/pages.csv', 7],
    ]);
    expect(await readAll(await files[0].open())).toBe('date,visitors\n2024-01-01,3\n');
    expect(await readAll(await files[1].open())).toBe('page\n/\n');
    expect(await readAll(await files[0].open())).toBe('date,visitors\n2024-01-01,3\n');
  });

  it.each([
    ['../x.csv', 'zz/x.csv', 'climbs out of the archive folder'],
    ['a/../../x', 'a/zz/zz/x', 'climbs out of the archive folder'],
    ['/etc/x', 'zetc/x', 'has an absolute path'],
    ['C:/x.csv', 'CC/x.csv', 'has an absolute path'],
  ])('refuses a zip entry named %s', async (hostile, harmless, reason) => {
    const zip = renameEntry(await zipOf([['ok.csv', 'a\n'], [harmless, 'a\n1\n']]), harmless, hostile);
    const staged = await stage('upload.zip', zip);
    const err = await inputFiles([staged]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ImportInputError);
    expect((err as ImportInputError).file).toBe('upload.zip');
    expect((err as Error).message).toBe(`upload.zip: entry "${hostile}" ${reason}${reason.startsWith('climbs') ? ' (..)' : ''}`);
  });

  it('refuses a zip bomb: a few MiB of zeros squeezed into a few KiB', async () => {
    const zip = await zipOf([['zeros.csv', Buffer.alloc(4 * 1024 * 1024)]]);
    expect(zip.length).toBeLessThan(64 * 1024);
    const err = await inputFiles([await stage('bomb.zip', zip)]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ImportInputError);
    expect((err as Error).message).toMatch(/^bomb\.zip: entry "zeros\.csv" expands \d+ times; refused as a zip bomb$/);
  });

  it('accepts a well-compressed entry under the bomb threshold size', async () => {
    const files = await inputFiles([await stage('small.zip', await zipOf([['zeros.csv', Buffer.alloc(512 * 1024)]]))]);
    expect(files).toHaveLength(1);
    expect((await readAll(await files[0].open())).length).toBe(512 * 1024);
  });

  it('refuses an archive with too many entries', async () => {
    const zip = await zipOf([1, 2, 3, 4].map((i) => [`f${i}.csv`, 'a\n']));
    const err = await inputFiles([await stage('many.zip', zip)], { maxEntries: 3 }).catch((e: unknown) => e);
    expect((err as Error).message).toBe('many.zip: the archive has 4 entries; at most 3 are accepted');
  });

  it('refuses an entry or a whole archive over the uncompressed size limits', async () => {
    const zip = await zipOf([
      ['a.csv', 'x'.repeat(600)],
      ['b.csv', 'y'.repeat(600)],
    ], false);
    const one = await inputFiles([await stage('big.zip', zip)], { maxEntryBytes: 500 }).catch((e: unknown) => e);
    expect((one as Error).message).toBe('big.zip: entry "a.csv" is 600 bytes uncompressed; at most 500 are accepted');
    const all = await inputFiles([await stage('big.zip', zip)], { maxTotalBytes: 1000 }).catch((e: unknown) => e);
    expect((all as Error).message).toBe("big.zip: the archive's entries exceed 1000 bytes uncompressed together");
  });

  it('stops reading an entry that holds more bytes than its header declares', async () => {
    const zip = await zipOf([['lie.csv', 'z'.repeat(5000)]]);
    // The central directory's uncompressed size of the only entry (offset 24 of its record) now says 100.
    const lying = Buffer.from(zip);
    const central = lying.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]));
    lying.writeUInt32LE(100, central + 24);
    const [file] = await inputFiles([await stage('lie.zip', lying)]);
    expect(file.size).toBe(100);
    const err = await readAll(await file.open()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ImportInputError);
    expect((err as Error).message).toMatch(/^lie\.(csv|zip): /);
  });

  it.each([
    ['not a zip at all', Buffer.from('hello, this is plain text and not an archive')],
    ['an empty file', Buffer.alloc(0)],
  ])('refuses a corrupt zip: %s', async (_what, bytes) => {
    const err = await inputFiles([await stage('broken.zip', bytes)]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ImportInputError);
    expect((err as Error).message).toMatch(/^broken\.zip: not a readable zip archive \(.+\)$/);
  });

  it('refuses a truncated zip', async () => {
    const zip = await zipOf([['a.csv', 'a,b\n'.repeat(1000)]]);
    const err = await inputFiles([await stage('cut.zip', zip.subarray(0, zip.length - 30))]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ImportInputError);
    expect((err as Error).message).toMatch(/^cut\.zip: not a readable zip archive/);
  });

  it('gives a .gz as the file inside it', async () => {
    const [file] = await inputFiles([await stage('goatcounter-export.csv.gz', gzipSync('a,b\n1,2\n'))]);
    expect(file.name).toBe('goatcounter-export.csv');
    expect(file.size).toBe(8);
    expect(await readAll(await file.open())).toBe('a,b\n1,2\n');
  });

  it('stops a gzip bomb while it decompresses', async () => {
    const [file] = await inputFiles([await stage('bomb.csv.gz', gzipSync(Buffer.alloc(8 * 1024 * 1024)))]);
    const err = await readAll(await file.open()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ImportInputError);
    expect((err as Error).message).toBe('bomb.csv: expands more than 200 times; refused as a compression bomb');
  });

  it('refuses a damaged gzip file while reading it', async () => {
    const [file] = await inputFiles([await stage('bad.csv.gz', Buffer.from('definitely not gzip data'))]);
    const err = await readAll(await file.open()).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/^bad\.csv\.gz: not a readable gzip file/);
  });
});

describe('csvRecords', () => {
  it('numbers records by the line they start on, the header being line 1, with the BOM stripped', async () => {
    const text = '\uFEFFpath,title,ignored\n/,Home,x\n"/a","multi\nline",y\n\n/b,B,z\n';
    expect(await records(memoryFile('p.csv', text), ['path', 'title'])).toEqual([
      { line: 2, record: { path: '/', title: 'Home' } },
      { line: 3, record: { path: '/a', title: 'multi\nline' } },
      { line: 6, record: { path: '/b', title: 'B' } },
    ]);
  });

  it('reads an optional column missing from the header as empty', async () => {
    expect(await records(memoryFile('p.csv', 'path\n/x\n'), ['path', 'title'], ['path'])).toEqual([{ line: 2, record: { path: '/x', title: '' } }]);
  });

  it('refuses a header without a required column, naming the file, line 1 and the columns found', async () => {
    const err = await records(memoryFile('visitors.csv', 'date,visitors\n2024-01-01,3\n'), ['date', 'visitors', 'pageviews']).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ImportInputError);
    expect((err as ImportInputError).line).toBe(1);
    expect((err as Error).message).toBe('visitors.csv, line 1: missing column pageviews; found date, visitors');
  });

  it('refuses an unclosed quote, naming the file and the line the field opens on', async () => {
    const err = await records(memoryFile('x.csv', 'a,b\n1,2\n"open,3\n4,5\n6,7\n'), ['a', 'b']).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ImportInputError);
    expect((err as Error).message).toBe('x.csv, line 3: a quoted field is never closed');
  });

  it('refuses a record with more fields than the header', async () => {
    const err = await records(memoryFile('x.csv', 'a,b\n1,2\n1,2,3\n'), ['a', 'b']).catch((e: unknown) => e);
    expect((err as Error).message).toBe('x.csv, line 3: expected 2 fields like the header, found 3');
  });

  it('refuses an empty file for want of a header', async () => {
    const err = await records(memoryFile('empty.csv', ''), ['a']).catch((e: unknown) => e);
    expect((err as Error).message).toBe('empty.csv, line 1: the file is empty; a header line is required');
  });

  it('reads the records of a zip entry', async () => {
    const [file] = await inputFiles([await stage('e.zip', await zipOf([['in/p.csv', 'path\n/x\n/y\n']]))]);
    expect((await records(file, ['path'])).map((r) => r.record.path)).toEqual(['/x', '/y']);
  });
});
