// Reading a log that a web server appends to: whole lines from a byte offset, the file's identity
// (inode) to notice rotation, and the rotated file found again by its inode after a restart.
import { type FileHandle, open, readdir, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** One line as read: its bytes (with the newline) and where it lies in the file. */
export interface RawLine {
  bytes: Buffer;
  start: number;
  end: number;
  /** Longer than MAX_LINE_BYTES: no log format writes such a line, so its bytes are not kept. */
  oversize: boolean;
}

export const MAX_LINE_BYTES = 64 * 1024;
const CHUNK_BYTES = 256 * 1024;
const NEWLINE = 0x0a;

export interface OpenLogFile {
  /** The file's path when opened (a rotated file keeps its handle when renamed). */
  readonly path: string;
  readonly inode: string;
  /** Just past the last whole line read. */
  position: number;
  /** The whole lines from `position` on, at most about one chunk's worth; none at the end of the file. */
  readLines(): Promise<RawLine[]>;
  close(): Promise<void>;
}

export async function inodeOf(path: string): Promise<{ inode: string; size: number } | null> {
  try {
    const found = await stat(path, { bigint: true });
    return { inode: String(found.ino), size: Number(found.size) };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/** Opens a log at an offset. Null when it is not there (not yet created, or between a rotation's rename and create). */
export async function openLogFile(path: string, offset: number): Promise<OpenLogFile | null> {
  let handle: FileHandle;
  try {
    handle = await open(path, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  const inode = String((await handle.stat({ bigint: true })).ino);
  const buffer = Buffer.allocUnsafe(CHUNK_BYTES);

  /** Reads on from `from` to the next newline, for a line too long to keep: where it ends, or null at the end of the file. */
  const endOfLongLine = async (from: number): Promise<number | null> => {
    for (let at = from; ; ) {
      const { bytesRead } = await handle.read(buffer, 0, CHUNK_BYTES, at);
      if (bytesRead === 0) return null;
      const newline = buffer.subarray(0, bytesRead).indexOf(NEWLINE);
      if (newline >= 0) return at + newline + 1;
      at += bytesRead;
    }
  };

  const file: OpenLogFile = {
    path,
    inode,
    position: offset,
    async readLines() {
      const { bytesRead } = await handle.read(buffer, 0, CHUNK_BYTES, file.position);
      const lines: RawLine[] = [];
      let lineStart = 0;
      for (;;) {
        const newline = buffer.subarray(lineStart, bytesRead).indexOf(NEWLINE);
        if (newline < 0) break;
        const end = lineStart + newline + 1;
        const oversize = end - lineStart > MAX_LINE_BYTES;
        lines.push({ bytes: oversize ? Buffer.alloc(0) : Buffer.from(buffer.subarray(lineStart, end)), start: file.position + lineStart, end: file.position + end, oversize });
        lineStart = end;
      }
      // A chunk with no newline at all is the start of a line longer than any log writes.
      if (lines.length === 0 && bytesRead - lineStart > MAX_LINE_BYTES) {
        const end = await endOfLongLine(file.position + bytesRead);
        if (end !== null) lines.push({ bytes: Buffer.alloc(0), start: file.position, end, oversize: true });
      }
      if (lines.length > 0) file.position = lines[lines.length - 1].end;
      return lines;
    },
    close: () => handle.close(),
  };
  return file;
}

/** The first header lines (`#…`) of a file, for a format that names its columns there. */
export async function headerLines(path: string, upTo: number): Promise<string[]> {
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(Math.min(upTo, MAX_LINE_BYTES));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    const lines = buffer.subarray(0, bytesRead).toString('utf8').split('\n');
    const headers: string[] = [];
    for (const line of lines) {
      if (!line.startsWith('#')) break;
      headers.push(line);
    }
    return headers;
  } finally {
    await handle.close();
  }
}

/**
 * The file a log was rotated to (access.log → access.log.1), found by its inode among the files
 * beside it whose name starts with the log's: a rename keeps the inode, compression does not.
 */
export async function findRotated(logPath: string, inode: string): Promise<string | null> {
  const directory = dirname(logPath);
  const name = basename(logPath);
  let entries: string[];
  try {
    entries = await readdir(directory);
  } catch {
    return null;
  }
  for (const entry of entries) {
    if (entry === name || !entry.startsWith(name)) continue;
    const candidate = join(directory, entry);
    if ((await inodeOf(candidate).catch(() => null))?.inode === inode) return candidate;
  }
  return null;
}
