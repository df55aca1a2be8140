// What an import source is: a reader of another tool's files (or of a Plumb takeout) that checks
// every row without writing (validate, the dry run) and then writes the same rows into the site's
// tables, each stamped with the import's id (run). The import flow (lib/imports/imports.ts) owns
// the states, the staged files, progress, webhooks and the cleanup of a failed or deleted import;
// a source only reads files and writes rows.
import type { FunnelInput } from '../funnels/funnels.ts';
import type { GoalInput } from '../goals/goals.ts';
import type { AnalyticsStore } from '../stores/analytics/index.ts';

export const IMPORT_SOURCE_IDS = ['plausible', 'goatcounter', 'umami', 'plumb'] as const;
export type ImportSourceId = (typeof IMPORT_SOURCE_IDS)[number];

/** A staged file, whole and checksummed, on the local disk of the node that runs the step. */
export interface StagedFile {
  /** The name the uploader gave (already checked: no path, no control characters). */
  name: string;
  /** Where its bytes are now. */
  path: string;
  size: number;
}

/** The site being imported into, as the sources need it. */
export interface ImportSite {
  id: string;
  domain: string;
  timezone: string;
  /** Its team's tenant database. */
  tenant: string;
}

export interface ImportContext {
  site: ImportSite;
  importId: string;
  store: AnalyticsStore;
  now: Date;
  /** Aborted when the import must stop (step-down, deletion, shutdown): stop reading and throw. */
  signal: AbortSignal;
  /** Rows read so far out of a total when one is known; called now and then, cheap. */
  progress(rowsRead: number, rowsTotal?: number): void;
  /** While the import runs (not during validation): adds the goals and funnels a source carries. */
  setup?: SiteSetup;
}

/**
 * The site's goals and funnels as an import adds them (a takeout carries its site's): one whose
 * name the site already uses is left alone; what is created is removed again with the import.
 */
export interface SiteSetup {
  addGoal(goal: GoalInput): Promise<'created' | 'exists'>;
  addFunnel(funnel: FunnelInput): Promise<'created' | 'exists'>;
}

/** One kind of record found in the files (a Plausible table, GoatCounter pageviews, a takeout table). */
export interface ImportDataset {
  name: string;
  /** The files it was read from. */
  files: string[];
  rows_scanned: number;
  rows_accepted: number;
  rows_skipped: number;
  /** First and last day (YYYY-MM-DD, in the site's time zone) of its accepted rows; null when none. */
  from: string | null;
  to: string | null;
}

/** Rows left out for one reason, with the first few places it happened. */
export interface SkippedRows {
  reason: string;
  count: number;
  examples: { file: string; line: number; message: string }[];
}

/** The dry run's answer, and after the run the same figures for what was written. */
export interface ImportManifest {
  source: ImportSourceId;
  datasets: ImportDataset[];
  from: string | null;
  to: string | null;
  rows_scanned: number;
  rows_accepted: number;
  rows_skipped: number;
  skipped: SkippedRows[];
  /** Days of the range that already hold native (non-imported) data for the site. */
  overlap: { days: number; from: string | null; to: string | null };
  warnings: string[];
}

export interface ImportSource {
  id: ImportSourceId;
  /** 'raw' sources write pageviews/events/visits; 'aggregate' ones daily imported_* rows. */
  kind: 'raw' | 'aggregate';
  label: string;
  /** What to upload and where to get it, for GET /api/sites/{id}/importers and the dashboard. */
  description: string;
  /** File name extensions accepted (lower case, with the dot), and how many files at most. */
  extensions: readonly string[];
  maxFiles: number;
  /**
   * Reads every file and checks every row; writes nothing. A file that cannot be an input of this
   * source at all (wrong columns, not a zip, a zip bomb, another site's takeout) throws
   * ImportInputError naming the file and line; a bad row is skipped and counted with its reason.
   */
  validate(files: readonly StagedFile[], ctx: ImportContext): Promise<ImportManifest>;
  /**
   * Writes the rows validate accepted, every one with import_id = ctx.importId; returns the
   * figures of what it wrote. If it throws, the flow deletes every row with that import_id.
   */
  run(files: readonly StagedFile[], ctx: ImportContext): Promise<ImportManifest>;
}

/** A file that is not a usable input: a 422 before the import starts, or the import's failure. */
export class ImportInputError extends Error {
  readonly file: string;
  readonly line: number | null;

  constructor(file: string, line: number | null, message: string) {
    super(`${file}${line === null ? '' : `, line ${line}`}: ${message}`);
    this.name = 'ImportInputError';
    this.file = file;
    this.line = line;
  }
}
