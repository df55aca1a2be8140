// The import flow as the API drives it: create an import with its declared files → upload each
// file's bytes in chunks (resumable: a chunk must start where the stored bytes end; the SHA-256 is
// checked when the last byte arrives) → ask for validation (the dry run) → start it → read its
// state; or delete it with everything it added. Validation and the run itself happen on the leader
// (lib/imports/runner.ts), which picks up imports in `validating` and `running`.
import { createHash, randomUUID } from 'node:crypto';
import type { Static } from '@sinclair/typebox';
import { writeAudit } from '../audit/audit.ts';
import type { UserPrincipal } from '../auth/sessions.ts';
import { conflict, type FieldError, notFound, PlumbError, unprocessable, validationFailed } from '../errors.ts';
import type { Site } from '../sites/sites.ts';
import type { AnalyticsStore } from '../stores/analytics/index.ts';
import type { MetadataQueryable, MetadataStore } from '../stores/metadata/index.ts';
import type { ChunkReceipt, Import, ImporterList } from './responses.ts';
import type { ImportSourceId } from './source.ts';
import { IMPORT_SOURCES, importSource } from './sources/index.ts';
import { removeSetup } from './setup.ts';
import { deleteImportRows } from './tables.ts';

export type ImportView = Static<typeof Import>;
export const MAX_CHUNK_BYTES = 8 * 1024 * 1024;
const NAME_MAX = 255;

export interface DeclaredFile {
  name: string;
  size: number;
  sha256: string;
}

/** What the routes need besides the metadata store. */
export interface ImportLimits {
  maxFileBytes: number;
}

export function listImporters(limits: ImportLimits): Static<typeof ImporterList> {
  return {
    importers: IMPORT_SOURCES.map((s) => ({ id: s.id, kind: s.kind, label: s.label, description: s.description, extensions: [...s.extensions], max_files: s.maxFiles, max_file_bytes: limits.maxFileBytes })),
  };
}

/** Why a file name cannot be used: it must be a plain name, as the staged file and in messages. */
export function fileNameProblem(name: string): string | null {
  if (name.length === 0 || name.length > NAME_MAX) return `must be 1 to ${NAME_MAX} characters`;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'must not contain control characters';
  if (name.includes('/') || name.includes('\\')) return 'must be a file name without a folder (no / or \\)';
  if (name === '.' || name === '..') return 'must be a file name';
  return null;
}

interface ImportRow {
  id: string;
  site_id: string;
  source: ImportSourceId;
  state: ImportView['state'];
  created_by: string;
  manifest: ImportView['manifest'];
  progress: ImportView['progress'];
  error: ImportView['error'];
  created_at: string;
  updated_at: string;
  completed_at: string | null;
}

interface FileRow {
  import_id: string;
  index: number;
  name: string;
  size: number;
  sha256: string;
  received: number;
  complete: boolean;
}

const TIME = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
const SELECT_IMPORTS = `SELECT id, site_id, source, state, created_by, manifest, progress, error,
       ${TIME('created_at')} AS created_at, ${TIME('updated_at')} AS updated_at, ${TIME('completed_at')} AS completed_at
  FROM imports`;

async function views(db: MetadataQueryable, rows: ImportRow[]): Promise<ImportView[]> {
  if (rows.length === 0) return [];
  const { rows: files } = await db.query<FileRow>(
    'SELECT import_id, index, name, size, sha256, received, complete FROM import_files WHERE import_id = ANY($1::uuid[]) ORDER BY import_id, index',
    [rows.map((r) => r.id)],
  );
  return rows.map((row) => ({
    ...row,
    files: files.filter((f) => f.import_id === row.id).map(({ import_id: _id, ...f }) => ({ ...f, size: Number(f.size), received: Number(f.received) })),
  }));
}

/**
 * Whether the site has a completed import, the only way rows reach its imported tables (a deleted
 * import takes its rows along; a running or failed one is not shown). Stats read those tables only
 * when it has: a site that never imported anything pays for no imported-data queries.
 */
export async function hasCompletedImport(db: MetadataQueryable, siteId: string): Promise<boolean> {
  const { rows } = await db.query<{ found: boolean }>("SELECT EXISTS (SELECT 1 FROM imports WHERE site_id = $1 AND state = 'completed') AS found", [siteId]);
  return rows[0]?.found === true;
}

/** The site as the stats read it: with whether it has a completed import (StatsSite.imports). */
export async function withImports<T extends { id: string }>(db: MetadataQueryable, site: T): Promise<T & { imports: boolean }> {
  return { ...site, imports: await hasCompletedImport(db, site.id) };
}

export async function getImport(db: MetadataQueryable, siteId: string, importId: string): Promise<ImportView> {
  const { rows } = await db.query<ImportRow>(`${SELECT_IMPORTS} WHERE site_id = $1 AND id = $2`, [siteId, importId]);
  if (!rows[0]) throw notFound('Import not found');
  return (await views(db, rows))[0];
}

export async function listImports(db: MetadataQueryable, siteId: string): Promise<ImportView[]> {
  const { rows } = await db.query<ImportRow>(`${SELECT_IMPORTS} WHERE site_id = $1 ORDER BY imports.created_at DESC, id`, [siteId]);
  return views(db, rows);
}

const listed = (files: readonly { name: string }[]) => files.map((f) => f.name).join(', ');

export async function createImport(db: MetadataStore, actor: UserPrincipal, site: Site, input: { source: ImportSourceId; files: DeclaredFile[] }, limits: ImportLimits): Promise<ImportView> {
  const source = importSource(input.source);
  if (!source) throw validationFailed([{ field: 'source', message: `source ${input.source} is not available on this instance`, type: 'importSource' }]);
  const problems: FieldError[] = [];
  if (input.files.length > source.maxFiles) problems.push({ field: 'files', message: `files must list at most ${source.maxFiles} for ${source.label}`, type: 'arrayMax' });
  const seen = new Set<string>();
  input.files.forEach((file, i) => {
    const field = `files[${i}]`;
    const nameProblem = fileNameProblem(file.name);
    if (nameProblem) problems.push({ field: `${field}.name`, message: `${field}.name ${nameProblem}`, type: 'fileName' });
    else if (!source.extensions.some((ext) => file.name.toLowerCase().endsWith(ext))) {
      problems.push({ field: `${field}.name`, message: `${field}.name must end with ${source.extensions.join(', ')} for ${source.label}`, type: 'fileExtension' });
    }
    if (seen.has(file.name)) problems.push({ field: `${field}.name`, message: `${field}.name repeats ${file.name}`, type: 'unique' });
    seen.add(file.name);
  });
  if (problems.length > 0) throw validationFailed(problems);
  const large = input.files.find((file) => file.size > limits.maxFileBytes);
  if (large) {
    throw new PlumbError(413, 'payload_too_large', `${large.name} is ${large.size} bytes; an import accepts files of at most ${limits.maxFileBytes} bytes`, { limit_bytes: limits.maxFileBytes });
  }
  const id = randomUUID();
  await db.transaction(async (tx) => {
    await tx.query("INSERT INTO imports (id, site_id, source, state, created_by) VALUES ($1, $2, $3, 'pending', $4)", [id, site.id, source.id, actor.id]);
    for (const [index, file] of input.files.entries()) {
      await tx.query('INSERT INTO import_files (import_id, index, name, size, sha256) VALUES ($1, $2, $3, $4, $5)', [id, index, file.name, file.size, file.sha256.toLowerCase()]);
    }
    await writeAudit(tx, { teamId: site.team_id, action: 'import.created', actor, site: { id: site.id, domain: site.domain }, details: `created a ${source.label} import of ${listed(input.files)}` });
  });
  return getImport(db, site.id, id);
}

/** The import and one of its files, locked for the change (in a transaction). */
async function lockedFile(tx: MetadataQueryable, siteId: string, importId: string, index: number) {
  const found = await tx.query<{ state: string }>('SELECT state FROM imports WHERE site_id = $1 AND id = $2 FOR UPDATE', [siteId, importId]);
  if (!found.rows[0]) throw notFound('Import not found');
  const files = await tx.query<FileRow>('SELECT import_id, index, name, size, sha256, received, complete FROM import_files WHERE import_id = $1 AND index = $2 FOR UPDATE', [importId, index]);
  if (!files.rows[0]) throw notFound(`The import has no file ${index}`);
  const file = files.rows[0];
  return { state: found.rows[0].state, file: { ...file, size: Number(file.size), received: Number(file.received) } };
}

const receipt = (file: { index: number; name: string; size: number; received: number; complete: boolean }): Static<typeof ChunkReceipt> => ({
  index: file.index,
  name: file.name,
  size: file.size,
  received: file.received,
  complete: file.complete,
});

/**
 * Stores one chunk of a file at `offset`, which must be where its stored bytes end (409 with
 * `details.received` otherwise, for the client to resume from). With the last byte the whole
 * file's SHA-256 is checked: a mismatch discards its bytes (422, received 0). An empty chunk at
 * the end of a file whose bytes all arrived but were not yet checked (the node stopped in between)
 * runs the check again.
 */
export async function receiveChunk(db: MetadataStore, siteId: string, importId: string, index: number, offset: number, bytes: Buffer): Promise<Static<typeof ChunkReceipt>> {
  const stored = await db.transaction(async (tx) => {
    const { state, file } = await lockedFile(tx, siteId, importId, index);
    if (state !== 'pending') throw conflict(`The import is ${state}; its files can no longer change`, { received: file.received });
    if (file.complete) throw conflict(`${file.name} is complete: all ${file.size} bytes arrived and were checked`, { received: file.received });
    if (offset !== file.received) throw conflict(`${file.name} has ${file.received} bytes stored; the next chunk must start at offset ${file.received}, not ${offset}`, { received: file.received });
    if (bytes.length === 0 && file.received < file.size) throw validationFailed([{ field: 'body', message: 'body must hold the chunk’s bytes', type: 'required' }]);
    if (file.received + bytes.length > file.size) {
      throw unprocessable(`The chunk would take ${file.name} to ${file.received + bytes.length} bytes; its declared size is ${file.size}`, { received: file.received });
    }
    if (bytes.length > 0) {
      await tx.query('INSERT INTO import_chunks (import_id, file_index, "offset", data) VALUES ($1, $2, $3, $4)', [importId, index, offset, bytes]);
      await tx.query('UPDATE import_files SET received = received + $3 WHERE import_id = $1 AND index = $2', [importId, index, bytes.length]);
      await tx.query('UPDATE imports SET updated_at = now() WHERE id = $1', [importId]);
    }
    return { ...file, received: file.received + bytes.length };
  });
  if (stored.received < stored.size) return receipt(stored);
  // Checked outside the transaction: a large file is read chunk by chunk without holding a lock.
  const digest = await stagedDigest(db, importId, index);
  const ok = digest === stored.sha256;
  await db.transaction(async (tx) => {
    if (ok) await tx.query('UPDATE import_files SET complete = true WHERE import_id = $1 AND index = $2', [importId, index]);
    else {
      await tx.query('DELETE FROM import_chunks WHERE import_id = $1 AND file_index = $2', [importId, index]);
      await tx.query('UPDATE import_files SET received = 0, complete = false WHERE import_id = $1 AND index = $2', [importId, index]);
    }
    await tx.query('UPDATE imports SET updated_at = now() WHERE id = $1', [importId]);
  });
  if (!ok) {
    throw unprocessable(`${stored.name}: the SHA-256 of the bytes received is ${digest}, not the ${stored.sha256} declared; its bytes were discarded, upload it again from offset 0`, { received: 0 });
  }
  return receipt({ ...stored, complete: true });
}

/** Each staged chunk of a file in order, one at a time (a chunk is at most 8 MiB). */
export async function* stagedChunks(db: MetadataQueryable, importId: string, index: number): AsyncIterable<Uint8Array> {
  let at = 0;
  for (;;) {
    const { rows } = await db.query<{ offset: number; data: Uint8Array }>(
      'SELECT "offset", data FROM import_chunks WHERE import_id = $1 AND file_index = $2 AND "offset" >= $3 ORDER BY "offset" LIMIT 1',
      [importId, index, at],
    );
    if (!rows[0]) return;
    yield rows[0].data;
    at = Number(rows[0].offset) + rows[0].data.length;
  }
}

async function stagedDigest(db: MetadataQueryable, importId: string, index: number): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of stagedChunks(db, importId, index)) hash.update(chunk);
  return hash.digest('hex');
}

async function auditSite(tx: MetadataQueryable, siteId: string): Promise<{ teamId: string; site: { id: string; domain: string } }> {
  const { rows } = await tx.query<{ team_id: string; domain: string }>('SELECT team_id, domain FROM sites WHERE id = $1', [siteId]);
  if (!rows[0]) throw notFound('Site not found');
  return { teamId: rows[0].team_id, site: { id: siteId, domain: rows[0].domain } };
}

/** Asks the leader for the dry run: from `pending` once every file is complete, or again from `validated`. */
export async function requestValidation(db: MetadataStore, siteId: string, importId: string): Promise<ImportView> {
  await db.transaction(async (tx) => {
    const current = await getImport(tx, siteId, importId);
    if (current.state !== 'pending' && current.state !== 'validated') throw conflict(`The import is ${current.state}; only a pending or validated import can be validated`);
    const missing = current.files.filter((f) => !f.complete);
    if (missing.length > 0) throw conflict(`Not every file has arrived: ${missing.map((f) => `${f.name} (${f.received} of ${f.size} bytes)`).join(', ')}`);
    await tx.query("UPDATE imports SET state = 'validating', manifest = NULL, error = NULL, claimed_epoch = NULL, updated_at = now() WHERE id = $1", [importId]);
  });
  return getImport(db, siteId, importId);
}

/** Asks the leader to write the rows: only a validated import starts. */
export async function requestStart(db: MetadataStore, actor: UserPrincipal, siteId: string, importId: string): Promise<ImportView> {
  await db.transaction(async (tx) => {
    const current = await getImport(tx, siteId, importId);
    if (current.state !== 'validated') throw conflict(`The import is ${current.state}; only a validated import can start`);
    await tx.query(
      `UPDATE imports SET state = 'running', progress = $2, claimed_epoch = NULL, attempts = 0, updated_at = now() WHERE id = $1`,
      [importId, JSON.stringify({ rows_read: 0, rows_total: current.manifest?.rows_scanned ?? null })],
    );
    const { teamId, site } = await auditSite(tx, siteId);
    await writeAudit(tx, { teamId, action: 'import.started', actor, site, details: `started the ${current.source} import of ${listed(current.files)}` });
  });
  return getImport(db, siteId, importId);
}

/**
 * Deletes the import: its record and staged bytes, then every row it wrote in every table. A run in
 * progress on the leader sees its record gone within a second, stops, and removes what it wrote
 * after this (lib/imports/runner.ts).
 */
export async function deleteImport(db: MetadataStore, analytics: AnalyticsStore, actor: UserPrincipal, site: Site, importId: string): Promise<void> {
  const gone = await db.transaction(async (tx) => {
    const current = await getImport(tx, site.id, importId);
    const { rows } = await tx.query<{ created_goals: string[]; created_funnels: string[] }>('SELECT created_goals, created_funnels FROM imports WHERE id = $1', [importId]);
    await tx.query('DELETE FROM imports WHERE id = $1', [importId]);
    await writeAudit(tx, { teamId: site.team_id, action: 'import.deleted', actor, site: { id: site.id, domain: site.domain }, details: `deleted the ${current.source} import of ${listed(current.files)} (${current.state}) and every row it added` });
    return { ...current, setup: rows[0] };
  });
  if (gone.state === 'pending' || gone.state === 'validating' || gone.state === 'validated') return;
  await analytics.ensureTenant(site.team_id);
  await deleteImportRows(analytics, site.tenant, site.id, importId);
  await removeSetup(db, actor, site.id, gone.setup.created_goals, gone.setup.created_funnels);
}
