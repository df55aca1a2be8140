// The spreadsheet writer, read back by exceljs: its streaming reader (the one imports use) and its
// whole-workbook reader, which also reads the styles and the sheet views.
import { PassThrough } from 'node:stream';
import { describe, expect, it } from '@jest/globals';
import ExcelJS from 'exceljs';
import { type CellValue, columnLetters, writeWorkbook, xmlText } from '../../lib/exports/xlsx.ts';
import { readWorkbook, readZip } from '../support/takeout.ts';

/** Writes the sheets and answers the workbook's bytes and the rows counted. */
async function written(sheets: { name: string; columns: string[]; rows: CellValue[][] }[]) {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (chunk: Buffer) => chunks.push(chunk));
  const counts = await writeWorkbook(
    out,
    sheets.map((sheet) => ({
      ...sheet,
      rows: (async function* () {
        yield* sheet.rows;
      })(),
    })),
  );
  return { bytes: Buffer.concat(chunks), counts };
}

describe('xmlText', () => {
  it('escapes the characters XML gives a meaning to', () => {
    expect(xmlText('a & b < c > d "e"')).toBe('a &amp; b &lt; c &gt; d &quot;e&quot;');
  });

  it('drops what XML cannot hold and keeps tabs, line breaks and characters beyond the BMP', () => {
    expect(xmlText('a\u0000b\u0008c\u000Bd\u001Fe\uFFFEf')).toBe('abcdef');
    expect(xmlText('lone \uD800 high, lone \uDC00 low')).toBe('lone  high, lone  low');
    expect(xmlText('tab\tline\nreturn\r 🎉 ü')).toBe('tab\tline\nreturn\r 🎉 ü');
  });
});

describe('columnLetters', () => {
  it('names columns as Excel does, up to its last one', () => {
    expect([0, 1, 25, 26, 27, 51, 52, 701, 702, 16_383].map(columnLetters)).toEqual(['A', 'B', 'Z', 'AA', 'AB', 'AZ', 'BA', 'ZZ', 'AAA', 'XFD']);
  });
});

describe('writeWorkbook', () => {
  const awkward: CellValue[][] = [
    ['/a?b=1&c=<2>', 42, true, '  spaced  '],
    [null, 0.5, false, 'line\nbreak "quoted" 🎉'],
    ['control\u0001character', -7, null, null],
    ['', 12_345_678_901, true, 'ü'],
  ];

  it('writes every value back as it was, empty cells keeping the next ones in their columns', async () => {
    const { bytes, counts } = await written([{ name: 'pageviews', columns: ['path', 'n', 'flag', 'note'], rows: awkward }]);
    expect(counts).toEqual(new Map([['pageviews', 4]]));
    const [sheet] = await readWorkbook(bytes);
    expect(sheet.name).toBe('pageviews');
    expect(sheet.rows).toEqual([
      ['path', 'n', 'flag', 'note'],
      ['/a?b=1&c=<2>', 42, true, '  spaced  '],
      [undefined, 0.5, false, 'line\nbreak "quoted" 🎉'],
      ['controlcharacter', -7],
      ['', 12_345_678_901, true, 'ü'],
    ]);
  });

  it('makes a workbook a whole-file reader opens, the header bold and frozen above the rows', async () => {
    const { bytes } = await written([
      { name: 'pageviews', columns: ['path', 'n'], rows: [['/', 1]] },
      { name: 'a & b', columns: ['name'], rows: [] },
    ]);
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(bytes as unknown as ArrayBuffer);
    expect(workbook.worksheets.map((sheet) => sheet.name)).toEqual(['pageviews', 'a & b']);
    const pageviews = workbook.getWorksheet('pageviews')!;
    expect(pageviews.getRow(1).values).toEqual([undefined, 'path', 'n']);
    expect(pageviews.getCell('A1').font?.bold).toBe(true);
    expect(pageviews.getCell('A2').font?.bold).toBeFalsy();
    expect(pageviews.views[0]).toEqual(expect.objectContaining({ state: 'frozen', ySplit: 1 }));
    expect(workbook.getWorksheet('a & b')!.rowCount).toBe(1);
    expect([...(await readZip(bytes)).keys()].sort()).toEqual(['[Content_Types].xml', '_rels/.rels', 'xl/_rels/workbook.xml.rels', 'xl/styles.xml', 'xl/workbook.xml', 'xl/worksheets/sheet1.xml', 'xl/worksheets/sheet2.xml']);
  });

  it('takes rows only as fast as the workbook is read', async () => {
    const out = new PassThrough();
    let pulled = 0;
    async function* endless(): AsyncIterable<CellValue[]> {
      for (;;) {
        pulled++;
        yield [`/page/${pulled}`, pulled, 'https://referrer.example/with/a/longer/path'];
      }
    }
    const writing = writeWorkbook(out, [{ name: 'pageviews', columns: ['path', 'n', 'referrer'], rows: endless() }]);
    // Nobody reads `out`: the writer must come to a stop (once the buffers between it and `out`
    // are full) and wait, rather than buffer the endless rows.
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    let heldBack = -1;
    for (let tries = 0; tries < 50 && pulled !== heldBack; tries++) {
      heldBack = pulled;
      await sleep(300);
    }
    expect(pulled).toBe(heldBack);
    expect(heldBack).toBeLessThan(200_000);
    out.destroy();
    await expect(writing).rejects.toThrow('the reader of the workbook went away');
    expect(pulled).toBe(heldBack);
  });

  it('refuses a sheet that cannot hold a row', async () => {
    await expect(writeWorkbook(new PassThrough(), [], 1)).rejects.toThrow(RangeError);
  });
});
