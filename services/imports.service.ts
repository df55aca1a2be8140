// Imports of another tool's data into a site over HTTP: the importers on offer, creating an import
// with its declared files, uploading their bytes in resumable chunks, asking for the dry run and
// the run (which the leader's `imports.runner` job performs: this service's instance plugs the
// runner in, and wakes it on every node when a request asks for a step), reading and deleting
// imports. Site admins and up, people only. Thin actions over lib/imports.
import type { Context, ServiceSchema } from 'moleculer';
import { createImport, type DeclaredFile, deleteImport, getImport, listImporters, listImports, MAX_CHUNK_BYTES, receiveChunk, requestStart, requestValidation } from '../lib/imports/imports.ts';
import * as R from '../lib/imports/responses.ts';
import { type ImportsRunner, importsRunnerJob } from '../lib/imports/runner.ts';
import { IMPORT_SOURCE_IDS, type ImportSourceId } from '../lib/imports/source.ts';
import { action } from '../lib/openapi/action.ts';
import { NoContent } from '../lib/openapi/responses.ts';
import type { Runtime } from '../lib/runtime.ts';
import { liveSite } from '../lib/sites/sites.ts';
import type { RequestMeta } from '../types/meta.ts';

type Ctx<P = Record<string, never>> = Context<P, RequestMeta>;
type SiteParam = { id: string };
type ImportParam = SiteParam & { importId: string };

const tags = ['imports'];
/** Broadcast once a request has committed a step for the leader: its runner looks at once. */
export const IMPORTS_QUEUED = 'imports.queued';
const admin = { auth: 'user' as const, access: { site: { param: 'id', role: 'admin' as const } } };

export default function createImportsService(runtime: Runtime): ServiceSchema {
  const limits = () => ({ maxFileBytes: runtime.config.importMaxFileBytes });
  let runner: ImportsRunner | undefined;
  let unplug: (() => Promise<void>) | undefined;

  return {
    name: 'imports',
    settings: { rest: '/' },
    actions: {
      importers: action({
        rest: 'GET /api/sites/:id/importers',
        ...admin,
        params: { id: 'uuid' },
        openapi: { summary: 'The sources an import can read, with the files each takes and the limits', tags, response: R.ImporterList },
        handler: () => listImporters(limits()),
      }),

      list: action({
        rest: 'GET /api/sites/:id/imports',
        ...admin,
        params: { id: 'uuid' },
        openapi: { summary: 'Imports of the site, newest first', tags, response: R.ImportList },
        async handler(ctx: Ctx<SiteParam>) {
          return { imports: await listImports(runtime.metadata(), ctx.params.id) };
        },
      }),

      create: action({
        rest: 'POST /api/sites/:id/imports',
        location: '/api/sites/:id/imports/{id}',
        ...admin,
        params: {
          $$strict: true,
          id: 'uuid',
          source: { type: 'enum', values: [...IMPORT_SOURCE_IDS] },
          files: {
            type: 'array',
            min: 1,
            max: 100,
            items: {
              type: 'object',
              strict: true,
              props: {
                name: { type: 'string', min: 1, max: 255 },
                size: { type: 'number', integer: true, min: 1 },
                sha256: { type: 'string', pattern: /^[0-9a-fA-F]{64}$/ },
              },
            },
          },
        },
        openapi: {
          summary: 'Create an import: the source and the files to upload (name, size in bytes, SHA-256 in hex); their bytes follow with PUT …/files/{index}',
          description: 'A file larger than the instance’s limit (`-import-max-file-bytes`) is refused with 413. File names are plain names (no folders, no control characters) ending with one of the source’s extensions.',
          tags,
          successStatus: 201,
          response: R.Import,
          errors: [413],
        },
        async handler(ctx: Ctx<SiteParam & { source: ImportSourceId; files: DeclaredFile[] }>) {
          const site = await liveSite(runtime.sites, ctx.params.id);
          const created = await createImport(runtime.metadata(), ctx.meta.user!, site, { source: ctx.params.source, files: ctx.params.files }, limits());
          ctx.meta.$statusCode = 201;
          return created;
        },
      }),

      get: action({
        rest: 'GET /api/sites/:id/imports/:importId',
        ...admin,
        params: { id: 'uuid', importId: 'uuid' },
        openapi: { summary: 'One import: its state, files (with the bytes received so far), manifest, progress and error', tags, response: R.Import },
        handler: (ctx: Ctx<ImportParam>) => getImport(runtime.metadata(), ctx.params.id, ctx.params.importId),
      }),

      upload: action({
        rest: 'PUT /api/sites/:id/imports/:importId/files/:index',
        ...admin,
        rawBody: true,
        bodyLimit: MAX_CHUNK_BYTES,
        timeout: 0,
        params: {
          id: 'uuid',
          importId: 'uuid',
          index: { type: 'number', integer: true, min: 0, max: 99, convert: true },
          offset: { type: 'number', integer: true, min: 0, convert: true },
          body: { type: 'any' },
        },
        openapi: {
          summary: 'Upload the next chunk of a file (application/octet-stream, at most 8 MiB) at `offset`, which must equal the bytes already received',
          description:
            'An offset other than the bytes received is refused with 409, whose `details.received` is where to continue (after a dropped connection, read the import and resume from its file’s `received`). When the last byte arrives the SHA-256 is checked; a mismatch answers 422 and discards the file’s bytes (`received` 0).',
          tags,
          response: R.ChunkReceipt,
          errors: [409, 422],
        },
        handler(ctx: Ctx<ImportParam & { index: number; offset: number; body: unknown }>) {
          const { id, importId, index, offset, body } = ctx.params;
          const bytes = Buffer.isBuffer(body) ? body : body instanceof Uint8Array ? Buffer.from(body) : Buffer.alloc(0);
          return receiveChunk(runtime.metadata(), id, importId, index, offset, bytes);
        },
      }),

      validate: action({
        rest: 'POST /api/sites/:id/imports/:importId/validate',
        ...admin,
        params: { id: 'uuid', importId: 'uuid' },
        openapi: {
          summary: 'Check every file and row without writing anything (the dry run): the import turns validating, then validated with its manifest, or failed with the error',
          tags,
          successStatus: 202,
          response: R.Import,
          errors: [409],
        },
        async handler(ctx: Ctx<ImportParam>) {
          ctx.meta.$statusCode = 202;
          const asked = await requestValidation(runtime.metadata(), ctx.params.id, ctx.params.importId);
          ctx.broadcast(IMPORTS_QUEUED, {});
          return asked;
        },
      }),

      start: action({
        rest: 'POST /api/sites/:id/imports/:importId/start',
        ...admin,
        params: { id: 'uuid', importId: 'uuid' },
        openapi: {
          summary: 'Write the validated rows into the site: the import turns running (with progress), then completed, or failed with nothing of it kept',
          tags,
          successStatus: 202,
          response: R.Import,
          errors: [409],
        },
        async handler(ctx: Ctx<ImportParam>) {
          ctx.meta.$statusCode = 202;
          const asked = await requestStart(runtime.metadata(), ctx.meta.user!, ctx.params.id, ctx.params.importId);
          ctx.broadcast(IMPORTS_QUEUED, {});
          return asked;
        },
      }),

      remove: action({
        rest: 'DELETE /api/sites/:id/imports/:importId',
        ...admin,
        params: { id: 'uuid', importId: 'uuid' },
        timeout: 0,
        openapi: { summary: 'Delete the import and every row it added (a running one is stopped), with its uploaded files', tags, successStatus: 204, response: NoContent },
        async handler(ctx: Ctx<ImportParam>) {
          const site = await liveSite(runtime.sites, ctx.params.id);
          await deleteImport(runtime.metadata(), runtime.analytics(), ctx.meta.user!, site, ctx.params.importId);
          ctx.meta.$statusCode = 204;
          return null;
        },
      }),
    },

    events: {
      /** A step was asked for (on any node): the leader's runner looks at once, not at its next check. */
      [IMPORTS_QUEUED]() {
        runner?.wake();
      },
    },

    started() {
      runner = importsRunnerJob(runtime);
      unplug = runtime.importRunner.plug(runner);
    },

    async stopped() {
      await unplug?.();
      unplug = undefined;
      runner = undefined;
    },
  };
}
