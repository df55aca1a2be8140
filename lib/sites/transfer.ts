// Moving a site to another team: its analytics are copied into the destination tenant database,
// checked, the site switched to the new team, and only then removed from the source. Any failure
// before the switch removes what was copied and leaves the source and the site as they were.
//
// The ingest writer keeps running meanwhile, and it writes into the tenant that was the site's
// team when the event was accepted. So rows can keep landing in the SOURCE during the move and for
// a short while after it (events already in the journal; other nodes' site caches until they
// hear of the change). Rows are told apart by a fingerprint of all their columns: after the switch
// every source row whose fingerprint the destination lacks is copied again, and only rows whose
// fingerprint the destination holds are deleted from the source, so a row arriving at any moment
// is either moved or still in the source for the next sweep, never lost. The service sweeps once
// more a minute later (sweepMovedSite) for the stragglers.
import { randomUUID } from 'node:crypto';
import { teamRoleOf } from '../auth/access.ts';
import { TEAM_RANK } from '../auth/roles.ts';
import type { UserPrincipal } from '../auth/sessions.ts';
import { writeAudit } from '../audit/audit.ts';
import { conflict, forbidden, notFound, PlumbError, validationFailed } from '../errors.ts';
import type { Log } from '../log.ts';
import { type AnalyticsStore, tenantDatabase } from '../stores/analytics/index.ts';
import type { MetadataStore } from '../stores/metadata/index.ts';
import { liveTeam, siteEvent } from './sites-admin.ts';

/** The imported daily aggregates of a site (migration 0004), each keyed by its `date`. */
export const IMPORTED_TABLES = [
  'imported_visitors',
  'imported_sources',
  'imported_pages',
  'imported_entry_pages',
  'imported_exit_pages',
  'imported_custom_events',
  'imported_locations',
  'imported_devices',
  'imported_browsers',
  'imported_operating_systems',
] as const;

/** Every tenant table that holds rows of a site (lib/stores/analytics/migrations). */
export const TENANT_TABLES = ['hits', 'events', 'web_vitals', 'ai_fetches', 'visits', ...IMPORTED_TABLES] as const;
export type TenantTable = (typeof TENANT_TABLES)[number];

/**
 * 'completed': the site is in the destination team with all its rows, the source holds none.
 * 'cleanup_pending': the site and all its rows are in the destination, but removing the source's
 * copies failed; they are invisible (the site no longer reads that tenant) and the next sweep
 * removes them. A failure before the switch is an error response, never a result.
 */
export type TransferStatus = 'completed' | 'cleanup_pending';

export interface TransferResult {
  site_id: string;
  source_team_id: string;
  destination_team_id: string;
  status: TransferStatus;
}

export interface TransferDeps {
  metadata: MetadataStore;
  analytics: AnalyticsStore;
  log: Log;
  /** Forgets cached site answers, on this node and the others, right after the switch. */
  sitesChanged(): void;
}

/** A move whose node died is given up after this long, so the site can be moved again. */
const STALE_AFTER = '1 hour';
/** Copy-what-is-missing-then-delete rounds after the switch; rows still arriving wait for the later sweep. */
const SWEEP_ROUNDS = 3;
const UNIQUE_VIOLATION = '23505';

/** Moves the site to the destination team the actor administers, with its analytics. */
export async function transferSite(
  deps: TransferDeps,
  input: { siteId: string; destinationTeamId: string; actor: UserPrincipal },
): Promise<TransferResult> {
  const { metadata, analytics, log } = deps;
  const { siteId, destinationTeamId: destinationTeam, actor } = input;
  const found = await metadata.query<{ team_id: string; domain: string }>('SELECT team_id, domain FROM sites WHERE id = $1 AND deleted_at IS NULL', [siteId]);
  if (!found.rows[0]) throw notFound('Site not found');
  const { team_id: sourceTeam, domain } = found.rows[0];
  if (sourceTeam === destinationTeam) throw validationFailed([{ field: 'team_id', message: 'team_id must name another team: the site already belongs to that one', type: 'sameTeam' }]);
  // Moving a site decides who owns it from then on, so the caller must administer the team it
  // leaves as well as the one it joins (the site's owner role is checked before this runs).
  await assertAdministers(metadata, actor, sourceTeam, 'You must be an admin of the site’s current team to move the site out of it');
  await assertAdministers(metadata, actor, destinationTeam, 'You must be an admin of the destination team to move a site into it');
  await liveTeam(metadata, destinationTeam);

  const transferId = await claim(metadata, { siteId, sourceTeam, destinationTeam, actor });
  const moving = { analytics, siteId, source: tenantDatabase(sourceTeam), destination: tenantDatabase(destinationTeam) };
  const finish = (status: string, error?: string) =>
    metadata
      .query('UPDATE site_transfers SET status = $2, error = $3, finished_at = now() WHERE id = $1', [transferId, status, error ?? null])
      .catch((err: unknown) => log.error({ err, transferId }, 'site transfer: could not record how the move ended'));

  try {
    await analytics.ensureTenant(sourceTeam);
    await analytics.ensureTenant(destinationTeam);
    for (const table of TENANT_TABLES) await copyTable(moving, table);
    await switchTeam(metadata, { siteId, domain, sourceTeam, destinationTeam, actor });
  } catch (err) {
    // Copies are removed only when the site is known to be still in the source team: had the
    // switch committed after all (a lost connection during COMMIT), they are the site's data now.
    // Copies left in a tenant the site does not belong to are unread, and the next move clears them.
    const now = await metadata.query<{ team_id: string }>('SELECT team_id FROM sites WHERE id = $1', [siteId]).catch(() => null);
    if (now?.rows[0]?.team_id === sourceTeam) await removeCopies(moving, log);
    await finish('failed', (err as Error).message);
    log.warn({ err, siteId, sourceTeam, destinationTeam }, 'site transfer failed; the site and its data stay in the source team');
    if (err instanceof PlumbError) throw err;
    throw new PlumbError(500, 'internal_error', 'Moving the site’s analytics failed; the site and its data stay in its current team. Try again later.');
  }

  deps.sitesChanged();
  let status: TransferStatus = 'completed';
  try {
    await sweep(moving);
  } catch (err) {
    status = 'cleanup_pending';
    log.warn({ err, siteId, sourceTeam }, 'site transfer: the site moved, but removing its rows from the source tenant failed');
  }
  await finish(status);
  return { site_id: siteId, source_team_id: sourceTeam, destination_team_id: destinationTeam, status };
}

/**
 * Moves rows of a moved site that reached the old team's tenant after the move (or that a failed
 * clean-up left there). Does nothing once the site has moved again or been deleted. Returns how
 * many rows are still in the source.
 */
export async function sweepMovedSite(deps: Pick<TransferDeps, 'metadata' | 'analytics'>, moved: Omit<TransferResult, 'status'>): Promise<number> {
  const { rows } = await deps.metadata.query<{ team_id: string }>('SELECT team_id FROM sites WHERE id = $1 AND deleted_at IS NULL', [moved.site_id]);
  if (rows[0]?.team_id !== moved.destination_team_id) return 0;
  const moving = {
    analytics: deps.analytics,
    siteId: moved.site_id,
    source: tenantDatabase(moved.source_team_id),
    destination: await deps.analytics.ensureTenant(moved.destination_team_id),
  };
  await sweep(moving);
  let left = 0;
  for (const table of TENANT_TABLES) left += await countRows(moving, moving.source, table);
  if (left > 0) await markCleanupPending(deps.metadata, moved.site_id);
  return left;
}

/** Deletes every row of the site from its team's tenant tables (site deletion). */
export async function deleteSiteRows(analytics: AnalyticsStore, teamId: string, siteId: string): Promise<void> {
  // Lightweight DELETE: rows vanish from reads at once (it waits by default, lightweight_deletes_sync
  // = 2) and disk space comes back with later merges; ALTER TABLE … DELETE would rewrite every
  // part holding the site straight away. Both run on chDB and a ClickHouse server alike.
  const m = { analytics, siteId, source: tenantDatabase(teamId), destination: tenantDatabase(teamId) };
  for (const table of TENANT_TABLES) {
    if ((await countRows(m, m.source, table)) === 0) continue;
    await analytics.command('DELETE FROM {db:Identifier}.{table:Identifier} WHERE site_id = {site:UUID}', { db: m.source, table, site: siteId });
  }
}

async function assertAdministers(metadata: MetadataStore, actor: UserPrincipal, teamId: string, refusal: string): Promise<void> {
  const role = await teamRoleOf(metadata, actor, teamId);
  // Instance owners and admins administer every team, so for them a null role means "no such team";
  // anyone else learns nothing about teams they are not in.
  if (!role && actor.role !== 'user') throw notFound('Team not found');
  if (!role || TEAM_RANK[role] < TEAM_RANK.admin) throw forbidden(refusal);
}

async function claim(metadata: MetadataStore, move: { siteId: string; sourceTeam: string; destinationTeam: string; actor: UserPrincipal }): Promise<string> {
  await metadata.query(
    `UPDATE site_transfers SET status = 'abandoned', finished_at = now(), error = 'gave up: no news from the node that ran it'
      WHERE site_id = $1 AND status = 'running' AND started_at < now() - $2::interval`,
    [move.siteId, STALE_AFTER],
  );
  const id = randomUUID();
  try {
    await metadata.query(
      `INSERT INTO site_transfers (id, site_id, source_team_id, destination_team_id, actor_user_id, status)
       VALUES ($1, $2, $3, $4, $5, 'running')`,
      [id, move.siteId, move.sourceTeam, move.destinationTeam, move.actor.id],
    );
  } catch (err) {
    if ((err as { code?: string }).code === UNIQUE_VIOLATION) throw conflict('Another transfer of this site is running; try again when it has finished');
    throw err;
  }
  return id;
}

/** The metadata half of the move: one transaction, so the site and both audit entries change together. */
async function switchTeam(
  metadata: MetadataStore,
  move: { siteId: string; domain: string; sourceTeam: string; destinationTeam: string; actor: UserPrincipal },
): Promise<void> {
  await metadata.transaction(async (tx) => {
    const destination = await liveTeam(tx, move.destinationTeam);
    const updated = await tx.query('UPDATE sites SET team_id = $2 WHERE id = $1 AND team_id = $3 AND deleted_at IS NULL', [move.siteId, move.destinationTeam, move.sourceTeam]);
    if (updated.rowCount !== 1) throw conflict('The site was changed or deleted during the move; nothing was moved');
    // Each team's entry names the other team, as it was called at the move.
    const source = (await tx.query<{ name: string }>('SELECT name FROM teams WHERE id = $1', [move.sourceTeam])).rows[0].name;
    const site = { id: move.siteId, domain: move.domain };
    await writeAudit(tx, {
      teamId: move.sourceTeam,
      action: 'site.transferred',
      actor: move.actor,
      site,
      subject: { type: 'team', id: destination.id, name: destination.name },
      details: `moved ${move.domain} to team "${destination.name}"`,
    });
    await writeAudit(tx, {
      teamId: move.destinationTeam,
      action: 'site.transferred',
      actor: move.actor,
      site,
      subject: { type: 'team', id: move.sourceTeam, name: source },
      details: `moved ${move.domain} in from team "${source}"`,
    });
    await siteEvent(tx, 'site.updated', { id: move.siteId, domain: move.domain, team_id: move.destinationTeam });
  });
}

async function markCleanupPending(metadata: MetadataStore, siteId: string): Promise<void> {
  await metadata.query(
    `UPDATE site_transfers SET status = 'cleanup_pending'
      WHERE id = (SELECT id FROM site_transfers WHERE site_id = $1 AND status <> 'running' ORDER BY started_at DESC LIMIT 1)`,
    [siteId],
  );
}

// ---- the analytics half ----

interface Moving {
  analytics: AnalyticsStore;
  siteId: string;
  source: string;
  destination: string;
}

/** Names and types of a table's columns, in order. */
async function columnsOf(m: Moving, database: string, table: TenantTable): Promise<{ name: string; type: string }[]> {
  return m.analytics.query('SELECT name, type FROM system.columns WHERE database = {db:String} AND table = {table:String} ORDER BY position', { db: database, table });
}

/**
 * `cityHash64(col0, col1, …)` over every column, with the column names bound as identifiers. A
 * plain `cityHash64(*)` cannot be used: a DELETE's WHERE has no table scope for `*` to expand in.
 */
function fingerprint(columns: readonly { name: string }[]): { expr: string; params: Record<string, string> } {
  const params = Object.fromEntries(columns.map((c, i) => [`c${i}`, c.name]));
  // Hashed as one tuple: cityHash64 of a NULL argument (an event without revenue) is NULL, and NULL
  // never matches, while a tuple holding a NULL hashes like any other value.
  return { expr: `cityHash64(tuple(${columns.map((_, i) => `{c${i}:Identifier}`).join(', ')}))`, params };
}

async function countRows(m: Moving, database: string, table: TenantTable, where = '', extra: Record<string, unknown> = {}): Promise<number> {
  const [row] = await m.analytics.query<{ n: string }>(`SELECT count() AS n FROM {db:Identifier}.{table:Identifier} WHERE site_id = {site:UUID} ${where}`, {
    ...extra,
    db: database,
    table,
    site: m.siteId,
    src: m.source,
    dst: m.destination,
  });
  return Number(row.n);
}

/**
 * INSERT … SELECT with a token of its own: the same rows copied twice are stored twice, never
 * silently dropped as a replay. Rows go in as they are: a visit state and its cancellation are
 * not collapsed by the insert itself (optimize_on_insert), so the copy holds the source's rows.
 */
async function copyRows(m: Moving, table: TenantTable, where = '', extra: Record<string, unknown> = {}): Promise<void> {
  await m.analytics.command(
    `INSERT INTO {dst:Identifier}.{table:Identifier}
     SELECT * FROM {src:Identifier}.{table:Identifier} WHERE site_id = {site:UUID} ${where}
     SETTINGS insert_deduplication_token = {token:String}, optimize_on_insert = 0`,
    { ...extra, src: m.source, dst: m.destination, table, site: m.siteId, token: `plumb-transfer-${randomUUID()}` },
  );
}

async function copyTable(m: Moving, table: TenantTable): Promise<void> {
  // SELECT * maps columns by position, so both tenants must have the same columns in the same order.
  const columns = await columnsOf(m, m.source, table);
  if (JSON.stringify(columns) !== JSON.stringify(await columnsOf(m, m.destination, table))) {
    throw new Error(`the ${table} tables of the two tenant databases differ; run the tenant migrations first`);
  }
  // Rows of this site in the destination can only be leftovers of an earlier move that failed and
  // could not clean up; they would be counted twice. (Counted first: a DELETE is a mutation that
  // waits for the table's merges, slow enough to skip when there is nothing to delete.)
  if ((await countRows(m, m.destination, table)) > 0) {
    await m.analytics.command('DELETE FROM {dst:Identifier}.{table:Identifier} WHERE site_id = {site:UUID}', { dst: m.destination, table, site: m.siteId });
  }
  const before = await countRows(m, m.source, table);
  await copyRows(m, table);
  // The check: the copy holds at least what the source held before it, and every copied row is a
  // source row. Rows the writer adds to the source meanwhile have fingerprints the copy lacks, so
  // they do not upset the check; the sweep after the switch moves them.
  const fp = fingerprint(columns);
  const copied = await countRows(m, m.destination, table);
  const matched = await countRows(m, m.source, table, `AND ${fp.expr} IN (SELECT ${fp.expr} FROM {dst:Identifier}.{table:Identifier} WHERE site_id = {site:UUID})`, fp.params);
  if (copied < before || copied !== matched) {
    throw new Error(`copy check of ${table} failed: source had ${before} rows, destination got ${copied}, ${matched} of the source's rows match`);
  }
}

/** Undoes a failed move: every row of the site goes from the destination (they were all ours). */
async function removeCopies(m: Moving, log: Log): Promise<void> {
  for (const table of TENANT_TABLES) {
    try {
      if ((await countRows(m, m.destination, table)) === 0) continue;
      await m.analytics.command('DELETE FROM {dst:Identifier}.{table:Identifier} WHERE site_id = {site:UUID}', { dst: m.destination, table, site: m.siteId });
    } catch (err) {
      // Left over rows are invisible (the site does not read that tenant) and the next move of
      // the site clears them before copying.
      log.error({ err, table, siteId: m.siteId, destination: m.destination }, 'site transfer: could not remove copied rows after a failure');
    }
  }
}

/** After the switch: copy what the destination lacks, then delete from the source what it holds. */
async function sweep(m: Moving): Promise<void> {
  for (const table of TENANT_TABLES) {
    const fp = fingerprint(await columnsOf(m, m.source, table));
    const destinationRows = `(SELECT ${fp.expr} FROM {dst:Identifier}.{table:Identifier} WHERE site_id = {site:UUID})`;
    for (let round = 0; round < SWEEP_ROUNDS; round++) {
      if ((await countRows(m, m.source, table)) === 0) break;
      await copyRows(m, table, `AND ${fp.expr} NOT IN ${destinationRows}`, fp.params);
      await m.analytics.command(`DELETE FROM {src:Identifier}.{table:Identifier} WHERE site_id = {site:UUID} AND ${fp.expr} IN ${destinationRows}`, {
        ...fp.params,
        src: m.source,
        dst: m.destination,
        table,
        site: m.siteId,
      });
    }
  }
}
