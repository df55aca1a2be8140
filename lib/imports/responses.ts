// Response schemas of the import routes (services/imports.service.ts): published in the OpenAPI
// document and the types the handlers must return.
import { Type } from '@sinclair/typebox';
import { DateTime, nullable, object, stringEnum, Uuid } from '../openapi/responses.ts';
import { IMPORT_SOURCE_IDS } from './source.ts';

const Day = Type.String({ format: 'date', description: 'YYYY-MM-DD, in the site’s time zone' });

export const Importer = object({
  id: stringEnum(IMPORT_SOURCE_IDS),
  kind: stringEnum(['raw', 'aggregate'], { description: 'raw: pageviews and events (with visits built from them); aggregate: daily totals per dimension' }),
  label: Type.String(),
  description: Type.String({ description: 'What to upload and where to get it' }),
  extensions: Type.Array(Type.String(), { description: 'File name endings accepted, lower case' }),
  max_files: Type.Integer({ minimum: 1 }),
  max_file_bytes: Type.Integer({ minimum: 1 }),
});
export const ImporterList = object({ importers: Type.Array(Importer) });

export const ImportManifest = object({
  source: stringEnum(IMPORT_SOURCE_IDS),
  datasets: Type.Array(
    object({
      name: Type.String(),
      files: Type.Array(Type.String()),
      rows_scanned: Type.Integer({ minimum: 0 }),
      rows_accepted: Type.Integer({ minimum: 0 }),
      rows_skipped: Type.Integer({ minimum: 0 }),
      from: nullable(Day),
      to: nullable(Day),
    }),
  ),
  from: nullable(Day),
  to: nullable(Day),
  rows_scanned: Type.Integer({ minimum: 0 }),
  rows_accepted: Type.Integer({ minimum: 0 }),
  rows_skipped: Type.Integer({ minimum: 0 }),
  skipped: Type.Array(
    object({
      reason: Type.String(),
      count: Type.Integer({ minimum: 1 }),
      examples: Type.Array(object({ file: Type.String(), line: Type.Integer(), message: Type.String() })),
    }),
  ),
  overlap: object({ days: Type.Integer({ minimum: 0 }), from: nullable(Day), to: nullable(Day) }, { description: 'Days of the range that already hold pageviews Plumb collected itself' }),
  warnings: Type.Array(Type.String()),
});

export const ImportFile = object({
  index: Type.Integer({ minimum: 0 }),
  name: Type.String(),
  size: Type.Integer({ minimum: 1 }),
  sha256: Type.String({ description: 'Lower-case hex' }),
  received: Type.Integer({ minimum: 0, description: 'Bytes stored so far; the next chunk starts here' }),
  complete: Type.Boolean({ description: 'Every byte arrived and the SHA-256 matched' }),
});

export const IMPORT_STATES = ['pending', 'validating', 'validated', 'running', 'completed', 'failed'] as const;
export type ImportState = (typeof IMPORT_STATES)[number];

export const Import = object({
  id: Uuid,
  site_id: Uuid,
  source: stringEnum(IMPORT_SOURCE_IDS),
  state: stringEnum(IMPORT_STATES),
  files: Type.Array(ImportFile),
  manifest: nullable(ImportManifest),
  progress: nullable(object({ rows_read: Type.Integer({ minimum: 0 }), rows_total: nullable(Type.Integer({ minimum: 0 })) })),
  error: nullable(object({ message: Type.String(), file: nullable(Type.String()), line: nullable(Type.Integer()) })),
  created_at: DateTime,
  updated_at: DateTime,
  completed_at: nullable(DateTime),
  created_by: Uuid,
});
export const ImportList = object({ imports: Type.Array(Import) });

export const ChunkReceipt = object({
  index: Type.Integer({ minimum: 0 }),
  name: Type.String(),
  size: Type.Integer({ minimum: 1 }),
  received: Type.Integer({ minimum: 0 }),
  complete: Type.Boolean(),
});
