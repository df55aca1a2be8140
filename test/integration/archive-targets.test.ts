// Where archives are kept: a local directory and an S3 bucket (a real S3 server, s3rver) meet one
// specification — round trips with sha256, large files (multipart on S3), listing, deletion,
// absent keys, refused keys — and the local directory keeps its files private and never shows
// an object half written.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ArchiveTarget, localTarget, parseLocation, s3Target } from '../../plugins/archives/targets.ts';
import { S3_TEST_CREDENTIALS, type S3TestServer, startS3TestServer } from '../support/s3-test-server.ts';

const scratch = mkdtempSync(join(tmpdir(), 'plumb-archive-targets-'));
let s3: S3TestServer;
let made = 0;
const freshDir = () => join(scratch, `dir-${++made}`);

beforeAll(async () => {
  s3 = await startS3TestServer();
}, 30_000);

afterAll(async () => {
  await s3?.close();
  rmSync(scratch, { recursive: true, force: true });
}, 30_000);

/** A file in the scratch dir holding `content`. */
function fileWith(content: string | Buffer): string {
  const path = join(scratch, `source-${++made}`);
  writeFileSync(path, content);
  return path;
}

async function sha256OfFile(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Writes `mebibytes` MiB of random bytes, 1 MiB at a time, and answers their sha256. */
async function randomFile(path: string, mebibytes: number): Promise<string> {
  const hash = createHash('sha256');
  const handle = await open(path, 'w');
  try {
    for (let i = 0; i < mebibytes; i++) {
      const block = randomBytes(1024 * 1024);
      hash.update(block);
      await handle.write(block);
    }
  } finally {
    await handle.close();
  }
  return hash.digest('hex');
}

const ARCHIVED_ROWS = { text: 'archived rows\n', sha256: '37e63d192ac6bdde3378e8e9447893f02aac62a2c1f1b9a7062729eaf10098b6' };
const MANIFEST = { text: '{"version":1}', sha256: '2430f1a2ad2982d0067885488a4c89e21ad1d7c83b115ba8f1b20acc88dfaea8' };

describe.each([
  ['a local directory', () => localTarget(freshDir())],
  [
    'an S3 bucket',
    () => s3Target({ bucket: s3.bucket, prefix: `run-${++made}`, endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, ...S3_TEST_CREDENTIALS }),
  ],
])('archive target in %s', (_where, freshTarget: () => ArchiveTarget) => {
  it('stores a file and gives it back byte for byte, with its size and sha256', async () => {
    const target = freshTarget();
    const stored = await target.putFile('backups/2026-01-01/meta/users.ndjson', fileWith(ARCHIVED_ROWS.text));
    expect(stored).toEqual({ bytes: 14, sha256: ARCHIVED_ROWS.sha256 });

    const copy = join(scratch, `download-${++made}`);
    expect(await target.getFile('backups/2026-01-01/meta/users.ndjson', copy)).toEqual({ bytes: 14, sha256: ARCHIVED_ROWS.sha256 });
    expect(readFileSync(copy, 'utf8')).toBe(ARCHIVED_ROWS.text);
    expect(await target.getBytes('backups/2026-01-01/meta/users.ndjson')).toEqual(Buffer.from(ARCHIVED_ROWS.text));
  });

  it('stores an in-memory body, and a second put under the same key replaces the first', async () => {
    const target = freshTarget();
    expect(await target.putBytes('backups/2026-01-01/manifest.json', 'an older manifest')).toEqual({
      bytes: 17,
      sha256: '0c016691b494a0cc49fbd8151e12d11f2dc9e8eb7722d4c4586022a9c67954e6',
    });
    expect(await target.putBytes('backups/2026-01-01/manifest.json', Buffer.from(MANIFEST.text))).toEqual({ bytes: 13, sha256: MANIFEST.sha256 });
    expect((await target.getBytes('backups/2026-01-01/manifest.json'))?.toString()).toBe(MANIFEST.text);
    expect((await target.list('')).map((object) => object.key)).toEqual(['backups/2026-01-01/manifest.json']);
  });

  it('stores a 70 MiB file (in parts on S3) and gives back the same bytes', async () => {
    const target = freshTarget();
    const source = join(scratch, `large-${++made}`);
    const sha256 = await randomFile(source, 70);
    expect(await target.putFile('backups/2026-01-01/analytics/events.ndjson', source)).toEqual({ bytes: 70 * 1024 * 1024, sha256 });

    const copy = join(scratch, `download-${++made}`);
    expect(await target.getFile('backups/2026-01-01/analytics/events.ndjson', copy)).toEqual({ bytes: 70 * 1024 * 1024, sha256 });
    expect(await sha256OfFile(copy)).toBe(sha256);
    expect((await target.list('backups/')).map(({ key, size }) => ({ key, size }))).toEqual([
      { key: 'backups/2026-01-01/analytics/events.ndjson', size: 70 * 1024 * 1024 },
    ]);
    rmSync(source);
    rmSync(copy);
  }, 180_000);

  it('lists the objects whose keys start with a prefix, sorted by key, with size and time', async () => {
    const target = freshTarget();
    const before = Date.now() - 2000;
    for (const key of ['retention/site-b/2026-01.parquet', 'backups/2026-01-02/manifest.json', 'backups/2026-01-01/meta/users.ndjson', 'backups/2026-01-01/manifest.json', 'backupsextra']) {
      await target.putBytes(key, `content of ${key}`);
    }
    const listed = await target.list('backups/');
    expect(listed.map(({ key, size }) => ({ key, size }))).toEqual([
      { key: 'backups/2026-01-01/manifest.json', size: 43 },
      { key: 'backups/2026-01-01/meta/users.ndjson', size: 47 },
      { key: 'backups/2026-01-02/manifest.json', size: 43 },
    ]);
    for (const { modified } of listed) expect(modified.getTime()).toBeGreaterThan(before);
    expect((await target.list('backups/2026-01-0')).map((object) => object.key)).toEqual([
      'backups/2026-01-01/manifest.json',
      'backups/2026-01-01/meta/users.ndjson',
      'backups/2026-01-02/manifest.json',
    ]);
    expect((await target.list('backups')).map((object) => object.key)).toEqual([
      'backups/2026-01-01/manifest.json',
      'backups/2026-01-01/meta/users.ndjson',
      'backups/2026-01-02/manifest.json',
      'backupsextra',
    ]);
    expect((await target.list('')).map((object) => object.key)).toEqual([
      'backups/2026-01-01/manifest.json',
      'backups/2026-01-01/meta/users.ndjson',
      'backups/2026-01-02/manifest.json',
      'backupsextra',
      'retention/site-b/2026-01.parquet',
    ]);
    expect(await target.list('restores/')).toEqual([]);
  });

  it('lists and deletes more objects than one page or one delete request holds (1001)', async () => {
    const target = freshTarget();
    const keys = Array.from({ length: 1001 }, (_, i) => `retention/site-a/${String(i).padStart(4, '0')}.parquet`);
    for (let start = 0; start < keys.length; start += 25) {
      await Promise.all(keys.slice(start, start + 25).map((key) => target.putBytes(key, 'x')));
    }
    const listed = await target.list('retention/');
    expect(listed.length).toBe(1001);
    expect(listed[0].key).toBe('retention/site-a/0000.parquet');
    expect(listed[1000].key).toBe('retention/site-a/1000.parquet');

    await target.delete(keys);
    expect(await target.list('')).toEqual([]);
  }, 120_000);

  it('deletes the given keys, absent ones included, and keeps the others', async () => {
    const target = freshTarget();
    await target.putBytes('backups/2026-01-01/manifest.json', MANIFEST.text);
    await target.putBytes('backups/2026-01-01/meta/users.ndjson', ARCHIVED_ROWS.text);
    await target.putBytes('backups/2026-01-02/manifest.json', MANIFEST.text);

    await target.delete(['backups/2026-01-01/manifest.json', 'backups/2026-01-01/meta/users.ndjson', 'backups/2025-12-31/manifest.json']);
    expect((await target.list('')).map((object) => object.key)).toEqual(['backups/2026-01-02/manifest.json']);
    expect(await target.getBytes('backups/2026-01-01/manifest.json')).toBeNull();
    await target.delete([]);
  });

  it('answers null for an absent key’s body, and refuses to download it with an error naming the key', async () => {
    const target = freshTarget();
    expect(await target.getBytes('backups/none/manifest.json')).toBeNull();
    const copy = join(scratch, `download-${++made}`);
    await expect(target.getFile('backups/none/manifest.json', copy)).rejects.toThrow(`archive object "backups/none/manifest.json" is not in ${target.location}`);
    expect(existsSync(copy)).toBe(false);
  });

  it.each(['../x', '/x', 'a//b', 'a/', 'a/../../b', './a', 'a\\b', 'a\0b', ''])('refuses the key %j before touching anything', async (key) => {
    const target = freshTarget();
    const source = fileWith(ARCHIVED_ROWS.text);
    const refused = /^archive key ".*" is refused: /;
    await expect(target.putFile(key, source)).rejects.toThrow(refused);
    await expect(target.putBytes(key, MANIFEST.text)).rejects.toThrow(refused);
    await expect(target.getFile(key, join(scratch, `download-${++made}`))).rejects.toThrow(refused);
    await expect(target.getBytes(key)).rejects.toThrow(refused);
    await expect(target.delete(['backups/kept.json', key])).rejects.toThrow(refused);
    expect(await target.list('')).toEqual([]);
  });

  it('refuses a listing prefix that leaves its keys', async () => {
    await expect(freshTarget().list('../')).rejects.toThrow('archive key prefix "../" is refused: it has a .. segment');
  });
});

describe('archive target in a local directory', () => {
  const modeOf = (path: string) => (statSync(path).mode & 0o777).toString(8);

  it('is the owner’s alone: its folder and the folders below are 0700, its objects 0600', async () => {
    const dir = freshDir();
    mkdirSync(dir, { mode: 0o755 });
    const target = localTarget(dir);
    await target.putBytes('backups/2026-01-01/manifest.json', MANIFEST.text);
    await target.putFile('backups/2026-01-01/meta/users.ndjson', fileWith(ARCHIVED_ROWS.text));
    expect(target.location).toBe(dir);
    expect([dir, join(dir, 'backups'), join(dir, 'backups/2026-01-01'), join(dir, 'backups/2026-01-01/meta')].map(modeOf)).toEqual(['700', '700', '700', '700']);
    expect([join(dir, 'backups/2026-01-01/manifest.json'), join(dir, 'backups/2026-01-01/meta/users.ndjson')].map(modeOf)).toEqual(['600', '600']);
  });

  it('downloads to a file only its owner can read', async () => {
    const target = localTarget(freshDir());
    await target.putBytes('backups/2026-01-01/manifest.json', MANIFEST.text);
    const copy = join(scratch, `download-${++made}`);
    await target.getFile('backups/2026-01-01/manifest.json', copy);
    expect(modeOf(copy)).toBe('600');
  });

  it('writes nothing outside its folder for a key climbing out of it', async () => {
    const parent = freshDir();
    const target = localTarget(join(parent, 'archives'));
    await expect(target.putBytes('../escaped.json', MANIFEST.text)).rejects.toThrow('archive key "../escaped.json" is refused: it has a .. segment');
    expect(existsSync(join(parent, 'escaped.json'))).toBe(false);
  });

  it('removes the folders a delete leaves empty, and keeps those still holding objects', async () => {
    const dir = freshDir();
    const target = localTarget(dir);
    await target.putBytes('backups/2026-01-01/meta/users.ndjson', ARCHIVED_ROWS.text);
    await target.putBytes('backups/2026-01-02/manifest.json', MANIFEST.text);
    await target.delete(['backups/2026-01-01/meta/users.ndjson']);
    expect(readdirSync(join(dir, 'backups'))).toEqual(['2026-01-02']);
    await target.delete(['backups/2026-01-02/manifest.json']);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('keeps the object as it was, and no temp file, when the source fails to read', async () => {
    const dir = freshDir();
    const target = localTarget(dir);
    await target.putBytes('backups/2026-01-01/manifest.json', MANIFEST.text);
    // A folder opens like a file and fails at the first read.
    const unreadable = join(scratch, `unreadable-${++made}`);
    mkdirSync(unreadable);
    await expect(target.putFile('backups/2026-01-01/manifest.json', unreadable)).rejects.toThrow(/EISDIR/);
    await expect(target.putFile('backups/2026-01-01/users.ndjson', unreadable)).rejects.toThrow(/EISDIR/);
    expect((await target.getBytes('backups/2026-01-01/manifest.json'))?.toString()).toBe(MANIFEST.text);
    expect(readdirSync(join(dir, 'backups/2026-01-01'))).toEqual(['manifest.json']);
  });

  it('never shows an object while it is written, nor after the writing process is killed midway', async () => {
    const dir = freshDir();
    const target = localTarget(dir);
    // The writer reads a pipe this test feeds: it has stored 1 MiB and waits for more when killed.
    const pipe = join(scratch, `pipe-${++made}`);
    expect(spawnSync('mkfifo', [pipe]).status).toBe(0);
    const targets = new URL('../../plugins/archives/targets.ts', import.meta.url).pathname;
    const script = `import { localTarget } from ${JSON.stringify(targets)};
      await localTarget(${JSON.stringify(dir)}).putFile('backups/2026-01-01/analytics/events.ndjson', ${JSON.stringify(pipe)});`;
    const writer: ChildProcess = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: 'ignore' });
    // Opened read-write, a pipe does not wait for its reader (Linux): the test cannot hang here.
    const feed = await open(pipe, 'r+');
    await feed.write(Buffer.alloc(1024 * 1024, 'x'));

    const folder = join(dir, 'backups/2026-01-01/analytics');
    const partial = await waitForFileOfSize(folder, 1024 * 1024);
    expect(partial).not.toBe('events.ndjson');
    expect(await target.getBytes('backups/2026-01-01/analytics/events.ndjson')).toBeNull();
    expect(await target.list('')).toEqual([]);

    const exited = once(writer, 'exit');
    writer.kill('SIGKILL');
    await exited;
    await feed.close();
    expect(await target.getBytes('backups/2026-01-01/analytics/events.ndjson')).toBeNull();
    expect(await target.list('')).toEqual([]);

    await target.putBytes('backups/2026-01-01/analytics/events.ndjson', ARCHIVED_ROWS.text);
    expect((await target.list('')).map(({ key, size }) => ({ key, size }))).toEqual([{ key: 'backups/2026-01-01/analytics/events.ndjson', size: 14 }]);
  }, 30_000);
});

/** The name of the first file in `folder` to reach `size` bytes. */
async function waitForFileOfSize(folder: string, size: number): Promise<string> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const names = existsSync(folder) ? readdirSync(folder) : [];
    for (const name of names) {
      const info = await stat(join(folder, name)).catch(() => null);
      if (info && info.size >= size) return name;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`no file of ${size} bytes appeared in ${folder}`);
}

describe('archive target in an S3 bucket', () => {
  it('shows its bucket and prefix as its location, one slash between them, and never credentials', () => {
    const target = s3Target({ bucket: 'plumb-archives', prefix: '/plumb/prod/', region: 'eu-west-1', forcePathStyle: false, ...S3_TEST_CREDENTIALS });
    expect(target.location).toBe('s3://plumb-archives/plumb/prod');
    expect(s3Target({ bucket: 'plumb-archives', prefix: '', region: 'eu-west-1', forcePathStyle: false }).location).toBe('s3://plumb-archives');
  });

  it('keeps its objects under its prefix in the bucket', async () => {
    const options = { bucket: s3.bucket, endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, ...S3_TEST_CREDENTIALS };
    const prefix = `run-${++made}`;
    await s3Target({ ...options, prefix: `${prefix}/` }).putBytes('backups/2026-01-01/manifest.json', MANIFEST.text);
    expect((await s3Target({ ...options, prefix: '' }).list(`${prefix}/`)).map((object) => object.key)).toEqual([`${prefix}/backups/2026-01-01/manifest.json`]);
  });

  it('names the bucket and key in an S3 error, with the SDK’s error as its cause', async () => {
    const target = s3Target({ bucket: 'no-such-bucket', prefix: 'plumb', endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, ...S3_TEST_CREDENTIALS });
    const failure = await target.putBytes('backups/2026-01-01/manifest.json', MANIFEST.text).catch((error: Error) => error);
    expect(failure).toBeInstanceOf(Error);
    expect((failure as Error).message).toMatch(/^S3 PutObject of s3:\/\/no-such-bucket\/plumb\/backups\/2026-01-01\/manifest\.json failed: NoSuchBucket: /);
    expect(((failure as Error).cause as Error).name).toBe('NoSuchBucket');
  });

  it('refuses an access key id without its secret', () => {
    expect(() => s3Target({ bucket: 'plumb-archives', prefix: '', region: 'us-east-1', forcePathStyle: true, accessKeyId: 'AKIAEXAMPLE' })).toThrow(
      'S3 archive target: give both an access key id and a secret access key, or neither to use the default credential chain',
    );
  });
});

describe('parseLocation', () => {
  it.each([
    ['/var/backups/plumb', { kind: 'dir', dir: '/var/backups/plumb' }],
    ['/var/backups/plumb/', { kind: 'dir', dir: '/var/backups/plumb' }],
    ['s3://plumb-archives/plumb/prod', { kind: 's3', bucket: 'plumb-archives', prefix: 'plumb/prod' }],
    ['s3://plumb-archives/plumb/', { kind: 's3', bucket: 'plumb-archives', prefix: 'plumb' }],
    ['s3://plumb-archives', { kind: 's3', bucket: 'plumb-archives', prefix: '' }],
    ['s3://plumb.archives-2/', { kind: 's3', bucket: 'plumb.archives-2', prefix: '' }],
  ])('reads %j', (text, parts) => {
    expect(parseLocation(text)).toEqual(parts);
  });

  it('makes a relative directory absolute', () => {
    expect(parseLocation('archives')).toEqual({ kind: 'dir', dir: join(process.cwd(), 'archives') });
  });

  it.each([
    ['', 'archive location is empty: give a directory or s3://bucket/prefix'],
    ['s3://', 'archive location "s3://": the bucket name is empty'],
    ['s3:///plumb', 'archive location "s3:///plumb": the bucket name is empty'],
    ['s3://Plumb_Archives/x', 'archive location "s3://Plumb_Archives/x": a bucket name has lower-case letters, digits, dots and dashes, and starts and ends with a letter or digit'],
    ['s3://ab', 'archive location "s3://ab": a bucket name has 3 to 63 characters'],
    ['s3://plumb..archives', 'archive location "s3://plumb..archives": a bucket name has no two dots in a row'],
    ['s3://plumb-archives/a//b', 'archive location "s3://plumb-archives/a//b": the prefix is refused: it has an empty segment'],
    ['s3://plumb-archives/../b', 'archive location "s3://plumb-archives/../b": the prefix is refused: it has a .. segment'],
    ['s3:/plumb-archives', 'archive location "s3:/plumb-archives": give a directory or an s3://bucket/prefix URL'],
    ['https://backups.example.com/plumb', 'archive location "https://backups.example.com/plumb": give a directory or an s3://bucket/prefix URL'],
  ])('refuses %j', (text, message) => {
    expect(() => parseLocation(text)).toThrow(message);
  });
});
