// Favicon results kept for a day: in memory (a bounded LRU) and on disk under <data dir>/favicons,
// so a domain costs at most one upstream request a day, also across restarts. Placeholders are
// kept too: an upstream with no icon for a domain is not asked again every page view. Both are
// bounded: the disk keeps at most so many entries and bytes, dropping the least recently used.
import { createHash } from 'node:crypto';
import { chmod, mkdir, readdir, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Log } from '../log.ts';
import { PLACEHOLDER_ICON, PLACEHOLDER_TYPE } from './placeholder.ts';

export interface Icon {
  body: Buffer;
  contentType: string;
  /** Strong validator of the body, quoted as the ETag header wants it. */
  etag: string;
  placeholder: boolean;
  /** When the upstream was asked (ms since the epoch); the entry is fresh for the TTL after it. */
  fetchedAt: number;
}

export interface FaviconCache {
  /** A fresh entry, from memory or else from disk; null when there is none. */
  get(domain: string): Promise<Icon | null>;
  /** Keeps the entry in memory and writes it to disk (a disk failure is logged, never thrown). */
  set(domain: string, icon: Icon): Promise<void>;
  /** Deletes disk entries past the TTL; returns how many. */
  prune(): Promise<number>;
}

export interface FaviconCacheOptions {
  dir: string;
  ttlMs: number;
  log: Log;
  /** Memory bounds: entries and body bytes, whichever is reached first evicts the least recently used. */
  maxEntries?: number;
  maxMemoryBytes?: number;
  /** Disk bounds, likewise: past either, the least recently used files are deleted. */
  maxDiskEntries?: number;
  maxDiskBytes?: number;
  now?: () => number;
}

interface DiskHeader {
  domain: string;
  contentType: string;
  placeholder: boolean;
  fetchedAt: number;
}

/** A favicon file is at most ~100 KiB (FAVICON_MAX_BYTES), most are a few KiB or a placeholder header. */
export const DISK_MAX_ENTRIES = 10_000;
export const DISK_MAX_BYTES = 64 * 1024 * 1024;

export const etagOf = (body: Buffer) => `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
const PLACEHOLDER_ETAG = etagOf(PLACEHOLDER_ICON);

export function placeholderIcon(fetchedAt: number): Icon {
  return { body: PLACEHOLDER_ICON, contentType: PLACEHOLDER_TYPE, etag: PLACEHOLDER_ETAG, placeholder: true, fetchedAt };
}

export function createFaviconCache(options: FaviconCacheOptions): FaviconCache {
  const { dir, ttlMs, log } = options;
  const maxEntries = options.maxEntries ?? 2_000;
  const maxMemoryBytes = options.maxMemoryBytes ?? 16 * 1024 * 1024;
  const maxDiskEntries = options.maxDiskEntries ?? DISK_MAX_ENTRIES;
  const maxDiskBytes = options.maxDiskBytes ?? DISK_MAX_BYTES;
  const now = options.now ?? Date.now;
  // The disk's entries (file name → size), least recently used first; read from the folder once.
  let disk: Promise<Map<string, number>> | undefined;
  let diskBytes = 0;
  // Map iteration order is insertion order: re-inserting on use makes the first key the least recent.
  const memory = new Map<string, Icon>();
  let memoryBytes = 0;
  let dirReady: Promise<unknown> | undefined;

  // Names hashed: a 253-character domain plus a suffix would exceed the file-name limit.
  const nameOf = (domain: string) => `${createHash('sha256').update(domain).digest('hex')}.icon`;
  const fileOf = (domain: string) => join(dir, nameOf(domain));
  const fresh = (icon: Icon) => now() - icon.fetchedAt < ttlMs;

  const forget = (domain: string) => {
    const old = memory.get(domain);
    if (!old) return;
    memory.delete(domain);
    if (!old.placeholder) memoryBytes -= old.body.length;
  };
  const remember = (domain: string, icon: Icon) => {
    forget(domain);
    memory.set(domain, icon);
    // Placeholders share one bundled buffer, so they cost no memory of their own.
    if (!icon.placeholder) memoryBytes += icon.body.length;
    while (memory.size > maxEntries || memoryBytes > maxMemoryBytes) forget(memory.keys().next().value!);
  };

  /** The folder's entries by when they were written (mtime, which prune reads as fetch time too); uses reorder them here. */
  function diskIndex(): Promise<Map<string, number>> {
    disk ??= (async () => {
      const found: { name: string; size: number; used: number }[] = [];
      for (const name of await readdir(dir).catch(() => [] as string[])) {
        if (!name.endsWith('.icon')) continue;
        const info = await stat(join(dir, name)).catch(() => undefined);
        if (info) found.push({ name, size: info.size, used: info.mtimeMs });
      }
      found.sort((a, b) => a.used - b.used);
      diskBytes = found.reduce((sum, entry) => sum + entry.size, 0);
      return new Map(found.map((entry) => [entry.name, entry.size]));
    })();
    return disk;
  }

  const dropFromIndex = (index: Map<string, number>, name: string) => {
    const size = index.get(name);
    if (size === undefined) return;
    index.delete(name);
    diskBytes -= size;
  };

  /** Records a use (most recent last) and deletes the least recently used files past the bounds. */
  async function recordUse(name: string, size: number) {
    const index = await diskIndex();
    dropFromIndex(index, name);
    index.set(name, size);
    diskBytes += size;
    while (index.size > maxDiskEntries || diskBytes > maxDiskBytes) {
      const oldest = index.keys().next().value!;
      dropFromIndex(index, oldest);
      await unlink(join(dir, oldest)).catch(() => undefined);
    }
  }

  /** A use of an entry already on disk: it becomes the most recently used. */
  async function touch(name: string) {
    const index = await diskIndex();
    const size = index.get(name);
    if (size === undefined) return;
    index.delete(name);
    index.set(name, size);
  }

  async function readDisk(domain: string): Promise<Icon | null> {
    let file: Buffer;
    try {
      file = await readFile(fileOf(domain));
    } catch {
      return null;
    }
    try {
      const newline = file.indexOf(0x0a);
      const header = JSON.parse(file.subarray(0, newline).toString('utf8')) as DiskHeader;
      // A hash collision or a foreign file must not serve another domain's icon.
      if (header.domain !== domain) return null;
      await recordUse(nameOf(domain), file.length);
      if (header.placeholder) return placeholderIcon(header.fetchedAt);
      const body = Buffer.from(file.subarray(newline + 1));
      return { body, contentType: header.contentType, etag: etagOf(body), placeholder: false, fetchedAt: header.fetchedAt };
    } catch {
      return null;
    }
  }

  async function writeDisk(domain: string, icon: Icon): Promise<void> {
    // Only this node reads the cache: owner-only, whatever the umask.
    dirReady ??= mkdir(dir, { recursive: true, mode: 0o700 }).then(() => chmod(dir, 0o700));
    await dirReady;
    const header: DiskHeader = { domain, contentType: icon.contentType, placeholder: icon.placeholder, fetchedAt: icon.fetchedAt };
    const file = fileOf(domain);
    const temporary = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
    // Written aside and renamed: a reader never sees half a file, even if the process dies mid-write.
    const content = Buffer.concat([Buffer.from(`${JSON.stringify(header)}\n`), icon.placeholder ? Buffer.alloc(0) : icon.body]);
    await writeFile(temporary, content, { mode: 0o600 });
    await rename(temporary, file);
    await recordUse(nameOf(domain), content.length);
  }

  return {
    async get(domain) {
      const held = memory.get(domain);
      if (held && fresh(held)) {
        remember(domain, held);
        await touch(nameOf(domain));
        return held;
      }
      const stored = await readDisk(domain);
      if (!stored || !fresh(stored)) return null;
      remember(domain, stored);
      return stored;
    },

    async set(domain, icon) {
      remember(domain, icon);
      try {
        await writeDisk(domain, icon);
      } catch (err) {
        dirReady = undefined;
        log.warn({ err, domain }, 'favicon: writing the disk cache failed; the icon stays cached in memory only');
      }
    },

    async prune() {
      let names: string[];
      try {
        names = await readdir(dir);
      } catch {
        return 0;
      }
      let removed = 0;
      for (const name of names) {
        const path = join(dir, name);
        try {
          // mtime is when the entry was written, i.e. fetched (left-over temporary files go too).
          if (now() - (await stat(path)).mtimeMs >= ttlMs) {
            await unlink(path);
            if (disk) dropFromIndex(await disk, name);
            removed++;
          }
        } catch {
          // Gone already, or written meanwhile by another request: nothing to do.
        }
      }
      return removed;
    },
  };
}
