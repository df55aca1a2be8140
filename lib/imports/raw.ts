// What the sources of raw data (GoatCounter's and Umami's pageview exports) share: each reads its
// files into pageview and event rows; this module checks their dates, counts what was accepted or
// skipped and why (the manifest), and, in a run, writes the rows as ingest would have (channel and
// referrer classified by the ingest code, ids derived from the source's own session ids), each
// stamped with the import's id, then builds the import's visits from them.
import { createHash, randomUUID } from 'node:crypto';
import { localDate } from '../analytics/range.ts';
import { buildImportVisits } from '../analytics/visits.ts';
import { classifyReferrer } from '../ingest/enrich/referrer.ts';
import type { UtmFields } from '../ingest/enrich/url.ts';
import { type InputFile, inputFiles } from './files.ts';
import { type ImportContext, type ImportDataset, ImportInputError, type ImportManifest, type ImportSource, type ImportSourceId, type StagedFile } from './source.ts';
import { SkippedLog } from './skipped.ts';
import { nativeOverlap } from './overlap.ts';

export type RowKind = 'pageview' | 'event';

/** One pageview or event as a source read it, before Plumb's own columns are derived. */
export interface RawRow {
  kind: RowKind;
  at: Date;
  /** The source's id of the visit (session) this row belongs to. */
  visitKey: string;
  /** The source's id of the visitor (the same as visitKey when the source has no other). */
  visitorKey: string;
  path: string;
  hostname: string;
  /** The referrer as a URL, or ''. */
  referrer: string;
  /** A named source without a URL (an app, "Hacker News"), or ''. */
  referrerName: string;
  utm: UtmFields;
  country: string;
  region: string;
  browser: string;
  browser_version: string;
  os: string;
  os_version: string;
  device: string;
  screen_width: number;
  /** Events only. */
  name?: string;
}

/** Where a source hands what it reads. */
export interface RowSink {
  /** A row read from `file` at `line`; its date is checked here (a bad one skips it). */
  row(file: string, line: number, row: RawRow): Promise<void>;
  /** A row left out, with the reason shown in the manifest. */
  skip(kind: RowKind, reason: string, file: string, line: number, message: string): void;
  warn(message: string): void;
}

export interface RawFormat {
  id: ImportSourceId;
  label: string;
  description: string;
  extensions: readonly string[];
  /** Names (lower case) of the input files read: a staged file, a .gz's content or a zip's entry; others are passed over. */
  reads: readonly string[];
  maxFiles: number;
  /** Reads one input file (a staged file, or an entry of a staged zip) into the sink. */
  read(file: InputFile, sink: RowSink, ctx: ImportContext): Promise<void>;
}

const EARLIEST = Date.UTC(2000, 0, 1);
const DAY_MS = 86_400_000;
const BATCH_ROWS = 10_000;
const ZERO_UTM: UtmFields = { utm_source: '', utm_medium: '', utm_campaign: '', utm_term: '', utm_content: '' };

/** A UInt64 (as decimal text) from the source's id, the same for the same id within one import, unrelated across imports. */
export function derivedId(importId: string, what: string, key: string): string {
  return createHash('sha256').update(`${importId}\u0000${what}\u0000${key}`).digest().readBigUInt64BE(0).toString();
}

/** Why a row's instant cannot be imported, or null. */
export function dateProblem(at: Date, now: Date): { reason: string; message: string } | null {
  if (Number.isNaN(at.getTime())) return { reason: 'unreadable date', message: 'the date cannot be read' };
  if (at.getTime() < EARLIEST) return { reason: 'dated before 2000', message: `dated ${at.toISOString()}, before 2000` };
  if (at.getTime() > now.getTime() + DAY_MS) return { reason: 'dated in the future', message: `dated ${at.toISOString()}, more than a day ahead` };
  return null;
}

export const emptyUtm = (): UtmFields => ({ ...ZERO_UTM });

interface DatasetTally {
  files: Set<string>;
  scanned: number;
  accepted: number;
  skipped: number;
  from: string | null;
  to: string | null;
}

/** The import's figures as rows go by. */
class Tally {
  readonly datasets: Record<RowKind, DatasetTally> = { pageview: newDataset(), event: newDataset() };
  readonly skipped = new SkippedLog();
  readonly warnings: string[] = [];
  readonly perFile = new Map<string, { scanned: number; accepted: number; firstSkip: { line: number; message: string } | null }>();

  fileOf(name: string) {
    const known = this.perFile.get(name);
    if (known) return known;
    const entry = { scanned: 0, accepted: 0, firstSkip: null };
    this.perFile.set(name, entry);
    return entry;
  }

  accept(kind: RowKind, file: string, day: string) {
    const d = this.datasets[kind];
    d.files.add(file);
    d.scanned++;
    d.accepted++;
    if (d.from === null || day < d.from) d.from = day;
    if (d.to === null || day > d.to) d.to = day;
    const f = this.fileOf(file);
    f.scanned++;
    f.accepted++;
  }

  skip(kind: RowKind, reason: string, file: string, line: number, message: string) {
    const d = this.datasets[kind];
    d.files.add(file);
    d.scanned++;
    d.skipped++;
    const f = this.fileOf(file);
    f.scanned++;
    f.firstSkip ??= { line, message };
    this.skipped.record(reason, file, line, message);
  }

  rowsRead(): number {
    return this.datasets.pageview.scanned + this.datasets.event.scanned;
  }
}

const newDataset = (): DatasetTally => ({ files: new Set(), scanned: 0, accepted: 0, skipped: 0, from: null, to: null });

/** Inserts rows a batch at a time, each with the import's id. */
class RowWriter {
  private hits: Record<string, unknown>[] = [];
  private events: Record<string, unknown>[] = [];
  private readonly ctx: ImportContext;

  constructor(ctx: ImportContext) {
    this.ctx = ctx;
  }

  async add(row: RawRow): Promise<void> {
    const { site, importId } = this.ctx;
    const referrer = classifyReferrer(row.referrer || undefined, row.hostname || site.domain, row.utm.utm_source || row.referrerName || undefined, row.utm.utm_medium);
    const common = {
      ts: row.at.toISOString(),
      site_id: site.id,
      session_id: derivedId(importId, 'visit', row.visitKey),
      visitor_id: derivedId(importId, 'visitor', row.visitorKey),
      path: row.path,
      hostname: row.hostname || site.domain,
      referrer: referrer.referrer,
      referrer_source: referrer.source_name,
      channel: referrer.referrer_source,
      ...row.utm,
      country: row.country,
      region: row.region,
      browser: row.browser,
      os: row.os,
      device: row.device,
      source: 'import',
      import_id: importId,
    };
    if (row.kind === 'pageview') {
      this.hits.push({ ...common, hit_id: randomUUID(), browser_version: row.browser_version, os_version: row.os_version, screen_width: row.screen_width, engagement_ms: 0, is_entry: 0 });
      if (this.hits.length >= BATCH_ROWS) await this.flushHits();
    } else {
      this.events.push({ ...common, event_id: randomUUID(), name: row.name ?? '', props: {}, revenue: null });
      if (this.events.length >= BATCH_ROWS) await this.flushEvents();
    }
  }

  private async flushHits() {
    const rows = this.hits;
    this.hits = [];
    if (rows.length > 0) await this.ctx.store.insert('hits', rows, { database: this.ctx.site.tenant });
  }

  private async flushEvents() {
    const rows = this.events;
    this.events = [];
    if (rows.length > 0) await this.ctx.store.insert('events', rows, { database: this.ctx.site.tenant });
  }

  async finish(): Promise<void> {
    await this.flushHits();
    await this.flushEvents();
    await buildImportVisits(this.ctx.store, this.ctx.site.tenant, this.ctx.site.id, this.ctx.importId);
  }
}

/** Reads every file once: counts (validate) or counts and writes (run). */
async function process(format: RawFormat, staged: readonly StagedFile[], ctx: ImportContext, write: boolean): Promise<ImportManifest> {
  const tally = new Tally();
  const writer = write ? new RowWriter(ctx) : null;
  const files = (await inputFiles(staged)).filter((file) => format.reads.some((ext) => file.name.toLowerCase().endsWith(ext)));
  if (files.length === 0) throw new ImportInputError(staged[0]?.name ?? '', null, `holds no ${format.reads.join(' or ')} file to read`);
  const sink: RowSink = {
    async row(file, line, row) {
      if (ctx.signal.aborted) throw ctx.signal.reason ?? new Error('import stopped');
      const problem = dateProblem(row.at, ctx.now);
      if (problem) tally.skip(row.kind, problem.reason, file, line, problem.message);
      else {
        tally.accept(row.kind, file, localDate(row.at, ctx.site.timezone));
        if (writer) await writer.add(row);
      }
      if (tally.rowsRead() % 1000 === 0) ctx.progress(tally.rowsRead());
    },
    skip(kind, reason, file, line, message) {
      tally.skip(kind, reason, file, line, message);
    },
    warn(message) {
      if (!tally.warnings.includes(message)) tally.warnings.push(message);
    },
  };
  for (const file of files) {
    await format.read(file, sink, ctx);
    const counts = tally.fileOf(file.name);
    if (counts.scanned > 0 && counts.accepted === 0) {
      throw new ImportInputError(file.name, counts.firstSkip?.line ?? null, `none of its ${counts.scanned} rows can be imported (${counts.firstSkip?.message ?? 'all were left out'})`);
    }
  }
  ctx.progress(tally.rowsRead());
  const accepted = tally.datasets.pageview.accepted + tally.datasets.event.accepted;
  if (accepted === 0) throw new ImportInputError(files[0].name, null, 'the files hold no pageviews or events to import');
  if (writer) await writer.finish();
  return manifestOf(format.id, tally, await overlapOf(ctx, tally));
}

function manifestOf(source: ImportSourceId, tally: Tally, overlap: ImportManifest['overlap']): ImportManifest {
  const datasets: ImportDataset[] = (['pageview', 'event'] as const)
    .filter((kind) => tally.datasets[kind].scanned > 0)
    .map((kind) => {
      const d = tally.datasets[kind];
      return { name: kind === 'pageview' ? 'pageviews' : 'events', files: [...d.files], rows_scanned: d.scanned, rows_accepted: d.accepted, rows_skipped: d.skipped, from: d.from, to: d.to };
    });
  const froms = datasets.map((d) => d.from).filter((d): d is string => d !== null).sort();
  const tos = datasets.map((d) => d.to).filter((d): d is string => d !== null).sort();
  return {
    source,
    datasets,
    from: froms[0] ?? null,
    to: tos.at(-1) ?? null,
    rows_scanned: datasets.reduce((n, d) => n + d.rows_scanned, 0),
    rows_accepted: datasets.reduce((n, d) => n + d.rows_accepted, 0),
    rows_skipped: datasets.reduce((n, d) => n + d.rows_skipped, 0),
    skipped: tally.skipped.list().sort((a, b) => b.count - a.count || a.reason.localeCompare(b.reason)),
    overlap,
    warnings: tally.warnings,
  };
}

/** Days of the imported range on which the site already has pageviews Plumb collected itself. */
/** The native days of the range the pageviews and events span. */
function overlapOf(ctx: ImportContext, tally: Tally): Promise<ImportManifest['overlap']> {
  const days = [tally.datasets.pageview, tally.datasets.event].flatMap((d) => [d.from, d.to]).filter((d): d is string => d !== null).sort();
  return nativeOverlap(ctx, days[0] ?? null, days.at(-1) ?? null);
}

/** An import source of raw pageviews and events read by `format`. */
export function rawSource(format: RawFormat): ImportSource {
  return {
    id: format.id,
    kind: 'raw',
    label: format.label,
    description: format.description,
    extensions: format.extensions,
    maxFiles: format.maxFiles,
    validate: (files, ctx) => process(format, files, ctx, false),
    run: (files, ctx) => process(format, files, ctx, true),
  };
}
