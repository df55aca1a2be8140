// Exports as files, thin actions over lib/exports/: a site's pageviews and AI fetches over a range
// in CSV, NDJSON, JSON, Parquet or a spreadsheet (Site Viewer or higher, or a token with
// stats:read on the site); a site's whole takeout (site admins); a person's own account data.
import { Type } from '@sinclair/typebox';
import type { Context, ServiceSchema } from 'moleculer';
import { RESOURCE_TYPES } from '../lib/ingest/enrich/resource-type.ts';
import { liveSite } from '../lib/sites/sites.ts';
import { CONTENT_TYPES, EXPORT_FORMATS, type ExportFormat, type ExportRequest, openExport } from '../lib/exports/exports.ts';
import { XLSX_CONTENT_TYPE as XLSX_MEDIA } from '../lib/exports/xlsx.ts';
import { accountTakeout } from '../lib/exports/account-takeout.ts';
import { siteTakeout, type TakeoutDownload } from '../lib/exports/site-takeout.ts';
import { AI_FETCHES, type ExportTable, PAGEVIEWS, rowSchema } from '../lib/exports/tables.ts';
import { action } from '../lib/openapi/action.ts';
import { Bytes, download } from '../lib/openapi/responses.ts';
import type { Runtime } from '../lib/runtime.ts';
import type { RequestMeta } from '../types/meta.ts';

type Ctx = Context<ExportRequest & { id: string }, RequestMeta & { $responseType?: string; $responseHeaders?: Record<string, string> }>;

const tags = ['exports'];
const viewer = { auth: 'any', access: { site: { param: 'id', role: 'viewer', scope: 'stats:read' } } } as const;
/** Dates (YYYY-MM-DD, whole days in the site's time zone) or RFC 3339 instants, as the stats routes take them. */
const exportQuery = {
  id: 'uuid',
  from: 'string|optional|max:64',
  to: 'string|optional|max:64',
  format: { type: 'enum', values: [...EXPORT_FORMATS], optional: true },
};
const RANGE_DOC =
  '`from`/`to` are dates (YYYY-MM-DD, whole days in the site’s time zone, `to` included) or RFC 3339 instants (`to` excluded); the default is the last 30 days, the longest range ten years. Rows come oldest first; timestamps are UTC (ISO 8601 text in csv/json/ndjson/xlsx, a UTC timestamp in Parquet); 64-bit integers are strings in JSON and text in xlsx. `format`: csv (default, with a header), ndjson, json (one array), parquet, xlsx (one sheet, continued on `<name> (2)`… past Excel’s 1,048,576 rows).';
const TAKEOUT_DOC =
  '`format`: xlsx (default: one sheet per table after a `manifest` sheet, continued on `<table> (2)`… past Excel’s row limit), or csv, ndjson, json, parquet: a zip with one file per table and `manifest.json` (kind, version, plumb_version, created_at, format, and per table its file, rows and columns with their types). Timestamps are UTC ISO 8601 text (UTC timestamps in Parquet), arrays and maps JSON text.';
const takeoutQuery = { format: { type: 'enum', values: [...EXPORT_FORMATS], optional: true } };
const takeoutFile = download({ 'application/zip': Bytes, [XLSX_MEDIA]: Bytes });

/** The file's formats for the OpenAPI document: JSON as an array of the table's rows, the others as bytes. */
const formats = (table: ExportTable) => {
  const media = (format: ExportFormat) => CONTENT_TYPES[format].split(';')[0];
  return download({ [media('csv')]: Bytes, [media('ndjson')]: Bytes, [media('json')]: Type.Array(rowSchema(table)), [media('parquet')]: Bytes, [media('xlsx')]: Bytes });
};

export default function createExportsService(runtime: Runtime): ServiceSchema {

  /** moleculer-web pipes the returned stream out with these headers, and destroys it if the client goes away. */
  const send = async (ctx: Ctx, table: ExportTable) => {
    const { id, ...request } = ctx.params;
    const file = await openExport(runtime.analytics(), await liveSite(runtime.sites, id), table, request);
    ctx.meta.$responseType = file.contentType;
    ctx.meta.$responseHeaders = { 'Content-Disposition': file.disposition, 'Cache-Control': 'no-store' };
    return file.body;
  };

  const sendTakeout = (ctx: Context<unknown, Ctx['meta']>, file: TakeoutDownload, format: ExportFormat) => {
    ctx.meta.$responseType = format === 'xlsx' ? XLSX_MEDIA : 'application/zip';
    ctx.meta.$responseHeaders = { 'Content-Disposition': `attachment; filename="${file.fileName}"`, 'Cache-Control': 'no-store' };
    return file.body;
  };
  const stores = () => ({ metadata: runtime.metadata(), analytics: runtime.analytics() });

  return {
    name: 'exports',
    settings: { rest: '/' },
    actions: {
      hits: action({
        rest: 'GET /api/sites/:id/hits/export',
        ...viewer,
        params: exportQuery,
        // A Parquet file is written whole before it is sent: no call timeout cuts a large one short.
        timeout: 0,
        openapi: { summary: 'The site’s pageviews over a range, as a file', description: RANGE_DOC, tags, response: formats(PAGEVIEWS) },
        handler: (ctx: Ctx) => send(ctx, PAGEVIEWS),
      }),

      aiFetches: action({
        rest: 'GET /api/sites/:id/ai-fetch/export',
        ...viewer,
        params: {
          ...exportQuery,
          assistant_name: 'string|optional|min:1|max:200',
          assistant_family: 'string|optional|min:1|max:200',
          resource_type: { type: 'enum', values: [...RESOURCE_TYPES], optional: true },
        },
        timeout: 0,
        openapi: {
          summary: 'The AI fetches of the site over a range, as a file',
          description: `${RANGE_DOC} \`assistant_name\`, \`assistant_family\` and \`resource_type\` keep only the fetches with exactly that value.`,
          tags,
          response: formats(AI_FETCHES),
        },
        handler: (ctx: Ctx) => send(ctx, AI_FETCHES),
      }),

      siteTakeout: action({
        rest: 'GET /api/sites/:id/takeout',
        auth: 'user',
        access: { site: { param: 'id', role: 'admin' } },
        params: { id: 'uuid', ...takeoutQuery },
        // A whole site's history takes as long as it takes; the client's pace sets it.
        timeout: 0,
        openapi: {
          summary: 'Everything of the site as one download: settings, goals, funnels, share links (no secrets) and every analytics table over its whole history',
          description: TAKEOUT_DOC,
          tags,
          response: takeoutFile,
        },
        async handler(ctx: Context<{ id: string; format?: ExportFormat }, Ctx['meta']>) {
          const format = ctx.params.format ?? 'xlsx';
          const site = await liveSite(runtime.sites, ctx.params.id);
          return sendTakeout(ctx, await siteTakeout(stores(), ctx.meta.user!, site, format), format);
        },
      }),

      accountTakeout: action({
        rest: 'GET /api/user/takeout',
        auth: 'user',
        params: takeoutQuery,
        timeout: 0,
        openapi: {
          summary: 'Your own account data as one download: profile, teams and sites with your roles, API clients, sign-in methods and the audit entries about you (no password hash, secret or token)',
          description: TAKEOUT_DOC,
          tags: ['account'],
          response: takeoutFile,
        },
        async handler(ctx: Context<{ format?: ExportFormat }, Ctx['meta']>) {
          const format = ctx.params.format ?? 'xlsx';
          return sendTakeout(ctx, await accountTakeout(stores(), ctx.meta.user!, format), format);
        },
      }),
    },
  };
}
