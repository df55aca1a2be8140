// Where archives are kept: a local directory or an S3-compatible bucket, behind one interface that
// stores, fetches, lists and deletes objects named by relative '/'-separated keys.
import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, type Dirent } from 'node:fs';
import { chmod, type FileHandle, mkdir, open, readdir, readFile, rename, rm, rmdir, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { pipeline as pipeStreams, Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  type GetObjectCommandOutput,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';

export interface StoredObject { key: string; size: number; modified: Date }
export interface Stored { bytes: number; sha256: string }

export interface ArchiveTarget {
  /** For logs and the admin page: `/abs/dir` or `s3://bucket/prefix` (never credentials). */
  readonly location: string;
  /** Stores the file at `filePath` under `key`; a reader never sees a partial object. Bytes and sha256 are computed while streaming. */
  putFile(key: string, filePath: string): Promise<Stored>;
  /** Same for a small in-memory body (manifests). */
  putBytes(key: string, body: Buffer | string): Promise<Stored>;
  /** Downloads `key` to `filePath` (streamed); rejects with a clear error when absent. */
  getFile(key: string, filePath: string): Promise<Stored>;
  /** A small object's body, or null when absent. */
  getBytes(key: string): Promise<Buffer | null>;
  /** Every object whose key starts with `prefix`, sorted by key. */
  list(prefix: string): Promise<StoredObject[]>;
  /** Deletes these keys (absent keys are fine). */
  delete(keys: readonly string[]): Promise<void>;
}

export interface S3TargetOptions {
  bucket: string;
  /** Keys are stored as `prefix/key`; leading and trailing slashes are dropped. */
  prefix: string;
  /** An S3-compatible store's URL; AWS S3 when absent. */
  endpoint?: string;
  region: string;
  forcePathStyle: boolean;
  /** Both, or neither to use the SDK's default credential chain (environment, profile, instance role). */
  accessKeyId?: string;
  secretAccessKey?: string;
}

const MiB = 1024 * 1024;
/** Files above this go up as a multipart upload; smaller ones as one PutObject. */
const MULTIPART_THRESHOLD = 64 * MiB;
const PART_SIZE = 16 * MiB;
const MAX_PARTS = 10_000;
const DELETE_BATCH = 1000;
const MAX_KEY_BYTES = 1024;
/** Names of the local target's files still being written; no key may end with it, so none is ever mistaken for an object. */
const PARTIAL = '.plumb-partial';

/** Why `key` cannot name an object, or null when it can. */
function keyProblem(key: string): string | null {
  if (key === '') return 'it is empty';
  if (Buffer.byteLength(key) > MAX_KEY_BYTES) return `it is longer than ${MAX_KEY_BYTES} bytes`;
  if (key.startsWith('/')) return 'it starts with /';
  if (key.includes('\\')) return 'it contains a backslash';
  for (const char of key) {
    const code = char.charCodeAt(0);
    if (code < 0x20 || code === 0x7f) return 'it contains a control character';
  }
  for (const segment of key.split('/')) {
    if (segment === '') return 'it has an empty segment';
    if (segment === '.' || segment === '..') return `it has a ${segment} segment`;
  }
  if (key.endsWith(PARTIAL)) return `it ends with ${PARTIAL}, kept for files being written`;
  return null;
}

function checkKey(key: string, what = 'archive key'): void {
  const problem = keyProblem(key);
  if (problem) throw new Error(`${what} ${JSON.stringify(key)} is refused: ${problem}`);
}

/** A listing prefix is a key, or the start of one (it may end with '/'). */
function checkPrefix(prefix: string): void {
  const problem = prefix === '' ? null : keyProblem(prefix.endsWith('/') ? prefix.slice(0, -1) : prefix);
  if (problem) throw new Error(`archive key prefix ${JSON.stringify(prefix)} is refused: ${problem}`);
}

/** S3's bucket naming rules, which S3-compatible stores follow. */
function bucketProblem(bucket: string): string | null {
  if (bucket === '') return 'the bucket name is empty';
  if (bucket.length < 3 || bucket.length > 63) return 'a bucket name has 3 to 63 characters';
  if (!/^[a-z0-9][a-z0-9.-]*[a-z0-9]$/.test(bucket)) return 'a bucket name has lower-case letters, digits, dots and dashes, and starts and ends with a letter or digit';
  if (bucket.includes('..')) return 'a bucket name has no two dots in a row';
  return null;
}

/** `s3://bucket/some/prefix` or a directory path → the parts; throws a clear Error on a bad one. */
export function parseLocation(text: string): { kind: 'dir'; dir: string } | { kind: 's3'; bucket: string; prefix: string } {
  if (text.trim() === '') throw new Error('archive location is empty: give a directory or s3://bucket/prefix');
  if (text.includes('\0')) throw new Error('archive location contains a NUL character');
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(text);
  if (!scheme || scheme[1].length === 1) return { kind: 'dir', dir: resolve(text) };
  if (scheme[1].toLowerCase() !== 's3' || !text.slice(scheme[0].length).startsWith('//')) {
    throw new Error(`archive location ${JSON.stringify(text)}: give a directory or an s3://bucket/prefix URL`);
  }
  const rest = text.slice(scheme[0].length + 2);
  const slash = rest.indexOf('/');
  const bucket = slash === -1 ? rest : rest.slice(0, slash);
  const bucketError = bucketProblem(bucket);
  if (bucketError) throw new Error(`archive location ${JSON.stringify(text)}: ${bucketError}`);
  const prefix = slash === -1 ? '' : rest.slice(slash + 1).replace(/\/+$/, '');
  const prefixError = prefix === '' ? null : keyProblem(prefix);
  if (prefixError) throw new Error(`archive location ${JSON.stringify(text)}: the prefix is refused: ${prefixError}`);
  return { kind: 's3', bucket, prefix };
}

/** Counts and hashes the bytes that flow through it. */
function meter() {
  const hash = createHash('sha256');
  let bytes = 0;
  const stream = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      bytes += chunk.length;
      done(null, chunk);
    },
  });
  return { stream, result: (): Stored => ({ bytes, sha256: hash.digest('hex') }) };
}

const codeOf = (error: unknown) => (error as NodeJS.ErrnoException).code;
/** What opening or removing a path that names no object answers. */
const isAbsent = (error: unknown) => ['ENOENT', 'ENOTDIR', 'EISDIR'].includes(codeOf(error) ?? '');
const byteOrder = (a: StoredObject, b: StoredObject) => Buffer.compare(Buffer.from(a.key), Buffer.from(b.key));

async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Writes `source` to `file` as a reader sees it only whole: into a temp file of the same folder,
 * fsync, rename over, fsync the folder (and the folders it created, so a crash cannot lose a
 * new folder's entry). On any failure the temp file is removed and `file` is as it was.
 */
async function writeAtomically(file: string, source: Readable): Promise<Stored> {
  const folder = dirname(file);
  // The name is cut short so that the temp name of a long one stays within the 255-byte limit.
  const temp = join(folder, `.${basename(file).slice(0, 64)}.${randomUUID()}${PARTIAL}`);
  let created: string | undefined;
  let handle: FileHandle | undefined;
  try {
    // A delete may remove the folder once it is empty, between making it and opening the file in it.
    for (let attempt = 1; !handle; attempt++) {
      created = (await mkdir(folder, { recursive: true, mode: 0o700 })) ?? created;
      try {
        handle = await open(temp, 'wx', 0o600);
      } catch (error) {
        if (codeOf(error) !== 'ENOENT' || attempt === 3) throw error;
      }
    }
  } catch (error) {
    source.destroy();
    throw error;
  }
  const counted = meter();
  try {
    // The stream fsyncs the file before it closes it.
    await pipeline(source, counted.stream, handle.createWriteStream({ flush: true }));
    await rename(temp, file);
  } catch (error) {
    source.destroy();
    await handle.close().catch(() => {});
    await rm(temp, { force: true });
    throw error;
  }
  const toSync = [folder];
  if (created) for (let dir = folder; dir !== dirname(created) && dir !== dirname(dir); dir = dirname(dir)) toSync.push(dirname(dir));
  for (const dir of toSync) await syncDir(dir);
  return counted.result();
}

/** A target in a local directory (made 0700, objects 0600); keys are paths below it. */
export function localTarget(dir: string): ArchiveTarget {
  const root = resolve(dir);
  let rootReady: Promise<unknown> | undefined;
  const ready = () => {
    // Archives hold every site's data: the folder is the owner's alone, whatever the umask.
    rootReady ??= mkdir(root, { recursive: true, mode: 0o700 })
      .then(() => chmod(root, 0o700))
      .catch((error: unknown) => {
        rootReady = undefined;
        throw error;
      });
    return rootReady;
  };
  const pathOf = (key: string) => join(root, ...key.split('/'));

  async function put(key: string, source: () => Readable): Promise<Stored> {
    checkKey(key);
    await ready();
    return writeAtomically(pathOf(key), source());
  }

  async function walk(folder: string, folderKey: string, prefix: string, found: StoredObject[]): Promise<void> {
    let entries: Dirent[];
    try {
      entries = await readdir(folder, { withFileTypes: true });
    } catch (error) {
      if (isAbsent(error)) return;
      throw error;
    }
    for (const entry of entries) {
      const key = folderKey + entry.name;
      if (entry.isDirectory()) {
        const below = `${key}/`;
        if (below.startsWith(prefix) || prefix.startsWith(below)) await walk(join(folder, entry.name), below, prefix, found);
      } else if (entry.isFile() && key.startsWith(prefix) && keyProblem(key) === null) {
        try {
          const info = await stat(join(folder, entry.name));
          found.push({ key, size: info.size, modified: info.mtime });
        } catch (error) {
          if (!isAbsent(error)) throw error;
        }
      }
    }
  }

  return {
    location: root,

    putFile: (key, filePath) => put(key, () => createReadStream(filePath)),

    putBytes: (key, body) => put(key, () => Readable.from([Buffer.from(body)])),

    async getFile(key, filePath) {
      checkKey(key);
      let handle: FileHandle;
      try {
        handle = await open(pathOf(key), 'r');
      } catch (error) {
        if (isAbsent(error)) throw new Error(`archive object ${JSON.stringify(key)} is not in ${root}`, { cause: error });
        throw error;
      }
      return writeAtomically(resolve(filePath), handle.createReadStream());
    },

    async getBytes(key) {
      checkKey(key);
      try {
        return await readFile(pathOf(key));
      } catch (error) {
        if (isAbsent(error)) return null;
        throw error;
      }
    },

    async list(prefix) {
      checkPrefix(prefix);
      const found: StoredObject[] = [];
      await walk(root, '', prefix, found);
      return found.sort(byteOrder);
    },

    async delete(keys) {
      for (const key of keys) checkKey(key);
      const emptied = new Set<string>();
      for (const key of keys) {
        try {
          await unlink(pathOf(key));
        } catch (error) {
          if (!isAbsent(error)) throw error;
        }
        for (let folder = dirname(pathOf(key)); folder !== root; folder = dirname(folder)) emptied.add(folder);
      }
      // Deepest first, so a folder's subfolders are gone before it is tried; one still holding
      // something (another object, a file being written) stays.
      for (const folder of [...emptied].sort((a, b) => b.length - a.length)) {
        try {
          await rmdir(folder);
        } catch (error) {
          if (!['ENOENT', 'ENOTDIR', 'ENOTEMPTY', 'EEXIST'].includes(codeOf(error) ?? '')) throw error;
        }
      }
    },
  };
}

/** The SDK error's name, message and HTTP status, for a message of our own. */
function describeS3Error(error: unknown): string {
  const { name, message, $metadata } = error as Error & { $metadata?: { httpStatusCode?: number } };
  const status = $metadata?.httpStatusCode ? ` (HTTP ${$metadata.httpStatusCode})` : '';
  return `${name && !message.startsWith(name) ? `${name}: ` : ''}${message}${status}`;
}

const isNoSuchKey = (error: unknown) => (error as Error).name === 'NoSuchKey';

/** Reads `buffer.length` bytes of `handle` from `position`, however many reads it takes. */
async function readPart(handle: FileHandle, buffer: Buffer, position: number): Promise<void> {
  for (let filled = 0; filled < buffer.length; ) {
    const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, position + filled);
    if (bytesRead === 0) throw new Error('the file became shorter while it was being uploaded');
    filled += bytesRead;
  }
}

/** A target in an S3 bucket (AWS or S3-compatible); keys are object names below the prefix. */
export function s3Target(options: S3TargetOptions): ArchiveTarget {
  const { bucket } = options;
  const bucketError = bucketProblem(bucket);
  if (bucketError) throw new Error(`S3 archive target: ${bucketError}`);
  const prefix = options.prefix.replace(/^\/+|\/+$/g, '');
  if (prefix !== '') checkKey(prefix, 'S3 archive prefix');
  if (Boolean(options.accessKeyId) !== Boolean(options.secretAccessKey)) {
    throw new Error('S3 archive target: give both an access key id and a secret access key, or neither to use the default credential chain');
  }
  const client = new S3Client({
    region: options.region,
    endpoint: options.endpoint || undefined,
    forcePathStyle: options.forcePathStyle,
    credentials: options.accessKeyId ? { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey! } : undefined,
    // By default the SDK adds a CRC32 to every upload, and for a stream body sends it as a trailer
    // of an aws-chunked body. Many S3-compatible stores do not decode aws-chunked (s3rver stores
    // the chunk framing as the object's bytes), so checksums are sent only where the API requires
    // one (DeleteObjects). Integrity does not rest on them: each object's sha256 is computed here
    // while it streams, recorded by the caller and checked again on download.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  const base = prefix === '' ? '' : `${prefix}/`;
  const location = prefix === '' ? `s3://${bucket}` : `s3://${bucket}/${prefix}`;
  const objectKey = (key: string) => {
    checkKey(key);
    return base + key;
  };

  /** Runs one S3 call; its error becomes one naming the operation, bucket and key, keeping the SDK's as cause. */
  async function call<T>(operation: string, name: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw new Error(`S3 ${operation} of s3://${bucket}/${name} failed: ${describeS3Error(error)}`, { cause: error });
    }
  }

  async function putOne(name: string, filePath: string, size: number): Promise<Stored> {
    const counted = meter();
    // pipeline destroys the body with the file's read error, which fails the request.
    const body = pipeStreams(createReadStream(filePath), counted.stream, () => {});
    try {
      await call('PutObject', name, () => client.send(new PutObjectCommand({ Bucket: bucket, Key: name, Body: body, ContentLength: size })));
    } finally {
      body.destroy();
    }
    const stored = counted.result();
    if (stored.bytes !== size) throw new Error(`S3 PutObject of s3://${bucket}/${name}: the file changed size while it was being uploaded`);
    return stored;
  }

  // Parts are read into memory one at a time (16 MiB, more for files above 160 GiB to stay within
  // 10,000 parts): a buffer, unlike a stream, lets the SDK retry a part that failed in flight.
  async function putMultipart(name: string, filePath: string, size: number): Promise<Stored> {
    const partSize = Math.max(PART_SIZE, Math.ceil(size / MAX_PARTS / MiB) * MiB);
    const { UploadId } = await call('CreateMultipartUpload', name, () => client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: name })));
    const hash = createHash('sha256');
    try {
      const parts: { ETag?: string; PartNumber: number }[] = [];
      const handle = await open(filePath, 'r');
      try {
        for (let offset = 0, PartNumber = 1; offset < size; offset += partSize, PartNumber++) {
          const part = Buffer.allocUnsafe(Math.min(partSize, size - offset));
          await readPart(handle, part, offset);
          hash.update(part);
          const { ETag } = await call('UploadPart', name, () =>
            client.send(new UploadPartCommand({ Bucket: bucket, Key: name, UploadId, PartNumber, Body: part, ContentLength: part.length })),
          );
          parts.push({ ETag, PartNumber });
        }
      } finally {
        await handle.close();
      }
      await call('CompleteMultipartUpload', name, () =>
        client.send(new CompleteMultipartUploadCommand({ Bucket: bucket, Key: name, UploadId, MultipartUpload: { Parts: parts } })),
      );
    } catch (error) {
      // Parts of an upload never completed are kept (and billed) until aborted. The upload's own
      // error is the one worth reporting, so a failed abort is not.
      await client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: name, UploadId })).catch(() => {});
      throw error;
    }
    return { bytes: size, sha256: hash.digest('hex') };
  }

  return {
    location,

    async putFile(key, filePath) {
      const name = objectKey(key);
      const { size } = await stat(filePath);
      return size > MULTIPART_THRESHOLD ? putMultipart(name, filePath, size) : putOne(name, filePath, size);
    },

    async putBytes(key, body) {
      const name = objectKey(key);
      const bytes = Buffer.from(body);
      await call('PutObject', name, () => client.send(new PutObjectCommand({ Bucket: bucket, Key: name, Body: bytes, ContentLength: bytes.length })));
      return { bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') };
    },

    async getFile(key, filePath) {
      const name = objectKey(key);
      let response: GetObjectCommandOutput;
      try {
        response = await client.send(new GetObjectCommand({ Bucket: bucket, Key: name }));
      } catch (error) {
        if (isNoSuchKey(error)) throw new Error(`archive object ${JSON.stringify(key)} is not in ${location}`, { cause: error });
        throw new Error(`S3 GetObject of s3://${bucket}/${name} failed: ${describeS3Error(error)}`, { cause: error });
      }
      if (!(response.Body instanceof Readable)) throw new Error(`S3 GetObject of s3://${bucket}/${name} answered no readable body`);
      return call('download', name, () => writeAtomically(resolve(filePath), response.Body as Readable));
    },

    async getBytes(key) {
      const name = objectKey(key);
      return call('GetObject', name, async () => {
        try {
          const response = await client.send(new GetObjectCommand({ Bucket: bucket, Key: name }));
          return Buffer.from(await response.Body!.transformToByteArray());
        } catch (error) {
          if (isNoSuchKey(error)) return null;
          throw error;
        }
      });
    },

    async list(listPrefix) {
      checkPrefix(listPrefix);
      const found: StoredObject[] = [];
      let ContinuationToken: string | undefined;
      do {
        const page = await call('ListObjectsV2', `${base}${listPrefix}*`, () =>
          client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: base + listPrefix, ContinuationToken })),
        );
        for (const object of page.Contents ?? []) {
          const key = object.Key?.slice(base.length) ?? '';
          // An object put there by something else under a name that is no key could be neither
          // read nor deleted through this target.
          if (keyProblem(key) === null) found.push({ key, size: object.Size ?? 0, modified: object.LastModified ?? new Date(0) });
        }
        if (page.IsTruncated && !page.NextContinuationToken) {
          throw new Error(`S3 ListObjectsV2 of s3://${bucket}/${base}${listPrefix}* answered a truncated page without a continuation token`);
        }
        ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (ContinuationToken);
      return found.sort(byteOrder);
    },

    async delete(keys) {
      const names = keys.map(objectKey);
      for (let start = 0; start < names.length; start += DELETE_BATCH) {
        const batch = names.slice(start, start + DELETE_BATCH);
        const what = `${batch[0]}…`;
        const result = await call('DeleteObjects', what, () =>
          client.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true } })),
        );
        const failed = result.Errors ?? [];
        if (failed.length > 0) {
          const sample = failed.slice(0, 3).map((error) => `${error.Key}: ${error.Code} ${error.Message ?? ''}`.trim());
          throw new Error(`S3 DeleteObjects in s3://${bucket} failed for ${failed.length} key(s): ${sample.join('; ')}`);
        }
      }
    },
  };
}
