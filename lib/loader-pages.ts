// A shared library's dynamic relocation table is read once, by the dynamic loader while it loads
// the library, and never again; its pages stay mapped and resident all the same, counted in the
// process's RSS until the kernel is short of memory. libchdb's table is 30 MiB (1.3 million
// relative relocations), a thirteenth of an idle node. So once the library is loaded, the node
// hands those pages back (`madvise(MADV_DONTNEED)`): they are clean pages of a private file
// mapping, so dropping them loses nothing, and a later read (none is expected) would read them
// from the file again. A mapping the process has written to (copy-on-write pages, such as the
// RELRO segment after relocation) is never touched: dropping it would throw its writes away
// (docs/decisions.md, "The node hands back libchdb's relocation table").
import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import { createRequire } from 'node:module';

const MADV_DONTNEED = 4;
/** The dynamic relocation sections, read by the loader at load time only (`.rela.plt` is not one: lazy binding reads it later). */
const LOADER_ONLY_SECTIONS = new Set(['.rela.dyn', '.rel.dyn', '.relr.dyn']);
const SHF_ALLOC = 0x2n;

/** A section of an ELF file: its name, where it is in the file, and its size. */
export interface ElfSection {
  name: string;
  offset: number;
  size: number;
}

/** One line of /proc/<pid>/maps with its smaps figures. */
export interface Mapping {
  start: bigint;
  end: bigint;
  perms: string;
  offset: number;
  path: string;
  /** Pages of the mapping the process has written (copy-on-write), in kB. */
  anonymousKb: number;
  /** The size of the mapping's pages, in bytes. */
  pageBytes: number;
}

/** A range of the address space to hand back. */
export interface PageRange {
  start: bigint;
  length: number;
}

/** The loader-only sections of a 64-bit little-endian ELF file, read from its section headers. */
export function loaderOnlySections(read: (offset: number, length: number) => Buffer): ElfSection[] {
  const header = read(0, 64);
  if (header.length < 64 || header.readUInt32BE(0) !== 0x7f454c46) throw new Error('not an ELF file');
  if (header[4] !== 2 || header[5] !== 1) throw new Error('not a 64-bit little-endian ELF file');
  const tableOffset = Number(header.readBigUInt64LE(0x28));
  const entrySize = header.readUInt16LE(0x3a);
  const count = header.readUInt16LE(0x3c);
  const namesIndex = header.readUInt16LE(0x3e);
  if (entrySize < 64 || count === 0 || namesIndex >= count) return [];
  const table = read(tableOffset, entrySize * count);
  if (table.length < entrySize * count) throw new Error('truncated section header table');
  const entry = (i: number) => {
    const at = i * entrySize;
    return { nameAt: table.readUInt32LE(at), flags: table.readBigUInt64LE(at + 8), offset: Number(table.readBigUInt64LE(at + 0x18)), size: Number(table.readBigUInt64LE(at + 0x20)) };
  };
  const namesSection = entry(namesIndex);
  const names = read(namesSection.offset, namesSection.size);
  const nameOf = (at: number) => {
    const end = names.indexOf(0, at);
    return names.toString('latin1', at, end === -1 ? names.length : end);
  };
  const sections: ElfSection[] = [];
  for (let i = 1; i < count; i++) {
    const section = entry(i);
    const name = nameOf(section.nameAt);
    if (LOADER_ONLY_SECTIONS.has(name) && (section.flags & SHF_ALLOC) !== 0n && section.size > 0) sections.push({ name, offset: section.offset, size: section.size });
  }
  return sections;
}

/** The mappings of /proc/<pid>/smaps text, each with its copy-on-write (Anonymous) pages. */
export function parseSmaps(smaps: string): Mapping[] {
  const mappings: Mapping[] = [];
  for (const line of smaps.split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) (\S{4}) ([0-9a-f]+) \S+ \d+\s*(.*)$/.exec(line);
    if (head) {
      mappings.push({ start: BigInt(`0x${head[1]}`), end: BigInt(`0x${head[2]}`), perms: head[3], offset: Number.parseInt(head[4], 16), path: head[5], anonymousKb: 0, pageBytes: 4096 });
      continue;
    }
    const field = /^(Anonymous|KernelPageSize):\s+(\d+) kB/.exec(line);
    if (!field || mappings.length === 0) continue;
    const mapping = mappings[mappings.length - 1];
    if (field[1] === 'Anonymous') mapping.anonymousKb = Number(field[2]);
    else mapping.pageBytes = Number(field[2]) * 1024;
  }
  return mappings;
}

/**
 * The whole pages of `sections` as mapped from the library at `path`: only in a private mapping
 * that is not writable and holds no page the process wrote; a section over two mappings gives a
 * range in each.
 */
export function droppableRanges(mappings: readonly Mapping[], path: string, sections: readonly ElfSection[]): PageRange[] {
  const ranges: PageRange[] = [];
  for (const mapping of mappings) {
    if (mapping.path !== path || mapping.perms[1] !== '-' || mapping.perms[3] !== 'p' || mapping.anonymousKb !== 0) continue;
    const mappedEnd = mapping.offset + Number(mapping.end - mapping.start);
    for (const section of sections) {
      const from = Math.max(section.offset, mapping.offset);
      const to = Math.min(section.offset + section.size, mappedEnd);
      // Pages the section shares with its neighbours stay: only pages wholly inside it are dropped.
      const first = Math.ceil(from / mapping.pageBytes) * mapping.pageBytes;
      const last = Math.floor(to / mapping.pageBytes) * mapping.pageBytes;
      if (last > first) ranges.push({ start: mapping.start + BigInt(first - mapping.offset), length: last - first });
    }
  }
  return ranges;
}

type Madvise = (start: bigint, length: number, advice: number) => number;

let madvise: Madvise | undefined;

/** libc's madvise, through koffi (Node has no call of its own for it). */
function loadMadvise(): Madvise {
  if (!madvise) {
    const koffi = createRequire(import.meta.url)('koffi') as { load(name: string): { func(signature: string): Madvise } };
    madvise = koffi.load('libc.so.6').func('int madvise(uintptr_t addr, size_t len, int advice)');
  }
  return madvise;
}

/** The loader-only sections of the ELF file at `path`. */
export function loaderOnlySectionsOf(path: string): ElfSection[] {
  const fd = openSync(path, 'r');
  try {
    return loaderOnlySections((offset, length) => {
      const buffer = Buffer.alloc(length);
      return buffer.subarray(0, readSync(fd, buffer, 0, length, offset));
    });
  } finally {
    closeSync(fd);
  }
}

/** The whole pages of the loader-only sections of every library this process maps whose path ends with `fileName`. */
export function loaderOnlyRanges(fileName: string): PageRange[] {
  const mappings = parseSmaps(readFileSync('/proc/self/smaps', 'utf8'));
  const paths = new Set(mappings.filter((m) => m.path.endsWith(`/${fileName}`)).map((m) => m.path));
  return [...paths].flatMap((path) => droppableRanges(mappings, path, loaderOnlySectionsOf(path)));
}

/**
 * Hands back the pages of the loader-only sections of every library this process maps whose path
 * ends with `fileName`, and answers how many bytes of mappings it dropped (0 where the library is
 * not loaded). Linux only: throws where /proc or libc's madvise is missing.
 */
export function releaseLoaderOnlyPages(fileName: string): number {
  let released = 0;
  for (const range of loaderOnlyRanges(fileName)) {
    if (loadMadvise()(range.start, range.length, MADV_DONTNEED) !== 0) throw new Error(`madvise refused ${range.length} bytes at 0x${range.start.toString(16)}`);
    released += range.length;
  }
  return released;
}
