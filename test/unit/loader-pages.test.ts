// Which pages of a loaded library only its loading read: the dynamic relocation sections found in
// an ELF file's section headers, and the whole pages of them that a read-only private mapping
// holds unwritten.
import { describe, expect, it } from '@jest/globals';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { droppableRanges, type ElfSection, loaderOnlySections, loaderOnlySectionsOf, type Mapping, parseSmaps } from '../../lib/loader-pages.ts';

const SHF_ALLOC = 2n;

/** A 64-bit little-endian ELF file's bytes holding just `sections` (and their names). */
function elfWith(sections: { name: string; flags: bigint; offset: number; size: number }[]): Buffer {
  const names = Buffer.from(`\0${sections.map((s) => `${s.name}\0`).join('')}.shstrtab\0`, 'latin1');
  const namesAt = 64;
  const tableAt = 4096;
  const count = sections.length + 2;
  const file = Buffer.alloc(tableAt + count * 64);
  file.writeUInt32BE(0x7f454c46, 0);
  file[4] = 2;
  file[5] = 1;
  file.writeBigUInt64LE(BigInt(tableAt), 0x28);
  file.writeUInt16LE(64, 0x3a);
  file.writeUInt16LE(count, 0x3c);
  file.writeUInt16LE(count - 1, 0x3e);
  names.copy(file, namesAt);
  let nameAt = 1;
  const header = (i: number, name: number, flags: bigint, offset: number, size: number) => {
    const at = tableAt + i * 64;
    file.writeUInt32LE(name, at);
    file.writeBigUInt64LE(flags, at + 8);
    file.writeBigUInt64LE(BigInt(offset), at + 0x18);
    file.writeBigUInt64LE(BigInt(size), at + 0x20);
  };
  sections.forEach((section, i) => {
    header(i + 1, nameAt, section.flags, section.offset, section.size);
    nameAt += section.name.length + 1;
  });
  header(count - 1, nameAt, 0n, namesAt, names.length);
  return file;
}

const reader = (file: Buffer) => (offset: number, length: number) => file.subarray(offset, offset + length);

describe('loaderOnlySections', () => {
  it('finds the dynamic relocation sections the loader maps', () => {
    const file = elfWith([
      { name: '.rela.dyn', flags: SHF_ALLOC, offset: 0x5c60, size: 0x100000 },
      { name: '.rela.plt', flags: SHF_ALLOC | 0x40n, offset: 0x105c60, size: 0x2c10 },
      { name: '.relr.dyn', flags: SHF_ALLOC, offset: 0x110000, size: 0x800 },
      { name: '.text', flags: SHF_ALLOC | 4n, offset: 0x200000, size: 0x10000 },
    ]);
    expect(loaderOnlySections(reader(file))).toEqual([
      { name: '.rela.dyn', offset: 0x5c60, size: 0x100000 },
      { name: '.relr.dyn', offset: 0x110000, size: 0x800 },
    ]);
  });

  it('leaves out a relocation section that is not mapped, and an empty one', () => {
    const file = elfWith([
      { name: '.rela.dyn', flags: 0n, offset: 0x5c60, size: 0x100000 },
      { name: '.rel.dyn', flags: SHF_ALLOC, offset: 0x5c60, size: 0 },
    ]);
    expect(loaderOnlySections(reader(file))).toEqual([]);
  });

  it('refuses a file that is not a 64-bit little-endian ELF file', () => {
    expect(() => loaderOnlySections(reader(Buffer.from('#!/bin/sh\necho not a library\n'.padEnd(64))))).toThrow('not an ELF file');
    const elf32 = elfWith([]);
    elf32[4] = 1;
    expect(() => loaderOnlySections(reader(elf32))).toThrow('not a 64-bit little-endian ELF file');
  });

  it("finds libchdb's relocation table, tens of megabytes", () => {
    const library = join(dirname(createRequire(import.meta.url).resolve('@chdb/lib-linux-x64-gnu/package.json')), 'libchdb.so');
    const sections = loaderOnlySectionsOf(library);
    expect(sections.map((s) => s.name)).toContain('.rela.dyn');
    expect(sections.reduce((sum, s) => sum + s.size, 0)).toBeGreaterThan(16 * 1024 * 1024);
  });
});

const LIBRARY = '/opt/lib/libexample.so';
const SMAPS = `7f0000000000-7f0000200000 r--p 00000000 fe:00 42                         ${LIBRARY}
Size:               2048 kB
Rss:                2048 kB
KernelPageSize:        4 kB
Anonymous:             0 kB
7f0000200000-7f0000400000 r-xp 00200000 fe:00 42                         ${LIBRARY}
Size:               2048 kB
Anonymous:             0 kB
7f0000400000-7f0000410000 r--p 00400000 fe:00 42                         ${LIBRARY}
Size:                 64 kB
Anonymous:            64 kB
7f0000410000-7f0000420000 rw-p 00410000 fe:00 42                         ${LIBRARY}
Anonymous:            16 kB
7f0000500000-7f0000600000 rw-p 00000000 00:00 0 
Anonymous:          1024 kB
`;

describe('parseSmaps', () => {
  it('reads each mapping with its written pages', () => {
    const mappings = parseSmaps(SMAPS);
    expect(mappings).toHaveLength(5);
    expect(mappings[0]).toEqual({ start: 0x7f0000000000n, end: 0x7f0000200000n, perms: 'r--p', offset: 0, path: LIBRARY, anonymousKb: 0, pageBytes: 4096 });
    expect(mappings[2]).toMatchObject({ perms: 'r--p', offset: 0x400000, anonymousKb: 64 });
    expect(mappings[4]).toMatchObject({ path: '', anonymousKb: 1024 });
  });
});

describe('droppableRanges', () => {
  const mappings = parseSmaps(SMAPS);
  const section = (offset: number, size: number): ElfSection => ({ name: '.rela.dyn', offset, size });

  it('keeps the pages a section shares with its neighbours', () => {
    expect(droppableRanges(mappings, LIBRARY, [section(0x5c60, 0x10000)])).toEqual([{ start: 0x7f0000006000n, length: 0xf000 }]);
  });

  it('answers nothing for a section smaller than its pages', () => {
    expect(droppableRanges(mappings, LIBRARY, [section(0x1010, 0x1000)])).toEqual([]);
  });

  it('aligns to the pages of the mapping, as its smaps gives their size', () => {
    const largePages = parseSmaps(SMAPS.replace('KernelPageSize:        4 kB', 'KernelPageSize:       64 kB'));
    expect(largePages[0].pageBytes).toBe(65536);
    expect(droppableRanges(largePages, LIBRARY, [section(0x5c60, 0x30000)])).toEqual([{ start: 0x7f0000010000n, length: 0x20000 }]);
  });

  it('gives a range in each read-only mapping a section spans', () => {
    expect(droppableRanges(mappings, LIBRARY, [section(0x1f0000, 0x20000)])).toEqual([
      { start: 0x7f00001f0000n, length: 0x10000 },
      { start: 0x7f0000200000n, length: 0x10000 },
    ]);
  });

  it('never touches a mapping the process wrote to, nor a writable one', () => {
    expect(droppableRanges(mappings, LIBRARY, [section(0x400000, 0x20000)])).toEqual([]);
  });

  it('never touches a shared mapping, nor another file', () => {
    const shared: Mapping[] = mappings.map((m) => ({ ...m, perms: m.perms.replace('p', 's') }));
    expect(droppableRanges(shared, LIBRARY, [section(0, 0x10000)])).toEqual([]);
    expect(droppableRanges(mappings, '/opt/lib/libother.so', [section(0, 0x10000)])).toEqual([]);
  });
});
