// Moving a site to another team (POST /api/sites/:id/transfer-team): its analytics end up in the
// destination tenant with the same counts and none left in the source; who may move; and, calling
// the use case directly, a failure mid-copy and rows arriving during the move.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createApiClient } from '../../lib/auth/api-clients.ts';
import { silentLog } from '../../lib/log.ts';
import { createSite, createTeam, type Site } from '../../lib/sites/sites.ts';
import { IMPORTED_TABLES, sweepMovedSite, TENANT_TABLES, type TenantTable, transferSite } from '../../lib/sites/transfer.ts';
import type { Params } from '../../lib/stores/analytics/index.ts';
import { as, type Person, person } from '../support/accounts.ts';
import { startTestNode, type TestNode } from '../support/node.ts';

let t: TestNode;
let destination: { id: string };
let mover: Person;
let siteAdmin: Person;
let sourceOnlyAdmin: Person;
let destinationOnlyAdmin: Person;
let counter = 0;

const db = () => t.node.runtime.metadata();
const analytics = () => t.node.runtime.analytics();
const join = (teamId: string, who: Person, role: string) => db().query('INSERT INTO team_members (team_id, user_id, role) VALUES ($1, $2, $3)', [teamId, who.id, role]);
const grant = (siteId: string, who: Person, role: string) => db().query('INSERT INTO site_members (site_id, user_id, role) VALUES ($1, $2, $3)', [siteId, who.id, role]);
const deps = () => ({ metadata: db(), analytics: analytics(), log: silentLog, sitesChanged: () => t.node.runtime.sites.invalidate() });

/**
 * The use case's dependencies, with `afterCopy` run right after each table's copy into the
 * destination and before that copy is checked: the analytics store the move uses is wrapped, so
 * faults and concurrent writes land exactly between the two steps.
 */
function depsCopyingWith(afterCopy: (table: TenantTable) => void | Promise<void>) {
  const store = analytics();
  const copied = new Set<string>();
  const command = async (sql: string, params?: Params) => {
    await store.command(sql, params);
    const table = String(params?.table);
    // The first copy of a table is the move's; later ones are the sweep's, after the switch.
    if (/^\s*INSERT INTO \{dst:Identifier\}/.test(sql) && !copied.has(table)) {
      copied.add(table);
      await afterCopy(table as TenantTable);
    }
  };
  const wrapped = new Proxy(store, {
    get(target, key) {
      if (key === 'command') return command;
      const value = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { ...deps(), analytics: wrapped };
}

/**
 * Rows of one site as the writer would store them: 3 hits, 2 events, 3 web vitals (two identical),
 * 2 AI fetches, and a visit written twice (its first state, that state's cancellation, the next).
 */
function rowsOf(siteId: string, tag: string): Record<TenantTable, Record<string, unknown>[]> {
  const importId = crypto.randomUUID();
  const at = (minute: number) => `2026-02-0${1 + (minute % 3)}T10:${String(minute).padStart(2, '0')}:00.000Z`;
  return {
    hits: [1, 2, 3].map((i) => ({ ts: at(i), site_id: siteId, session_id: String(i), hit_id: crypto.randomUUID(), path: `/${tag}/${i}`, country: 'DE' })),
    events: [1, 2].map((i) => ({ ts: at(i), site_id: siteId, event_id: crypto.randomUUID(), name: 'signup', props: { plan: `p${i}` }, revenue: i * 1.5 })),
    web_vitals: [
      { ts: at(4), site_id: siteId, path: `/${tag}`, metric: 'LCP', value: 1200 },
      { ts: at(4), site_id: siteId, path: `/${tag}`, metric: 'LCP', value: 1200 },
      { ts: at(5), site_id: siteId, path: `/${tag}`, metric: 'CLS', value: 0.1 },
    ],
    ai_fetches: [1, 2].map((i) => ({ ts: at(i), site_id: siteId, fetch_id: crypto.randomUUID(), path: `/${tag}/ai`, status_code: 200, assistant_name: 'GPTBot' })),
    visits: [
      { sign: 1, version: 1, pageviews: 1, exit_page: `/${tag}/1` },
      { sign: -1, version: 1, pageviews: 1, exit_page: `/${tag}/1` },
      { sign: 1, version: 2, pageviews: 2, exit_page: `/${tag}/2` },
    ].map((state) => ({ ...state, site_id: siteId, session_id: '1', start: at(1), first_ts: at(1), last_ts: at(2), entry_page: `/${tag}/1`, country: 'DE' })),
    // Two imported days in each imported table, of an import of their own (the columns not given take their defaults).
    ...imported(() => [1, 2].map((day) => ({ site_id: siteId, import_id: importId, date: `2024-01-0${day}`, visitors: day }))),
  };
}
const imported = <T>(value: () => T) => Object.fromEntries(IMPORTED_TABLES.map((table) => [table, value()])) as Record<(typeof IMPORTED_TABLES)[number], T>;
const SEEDED = { hits: 3, events: 2, web_vitals: 3, ai_fetches: 2, visits: 1, ...imported(() => 2) };
const NONE = { hits: 0, events: 0, web_vitals: 0, ai_fetches: 0, visits: 0, ...imported(() => 0) };

async function insertRows(teamId: string, siteId: string, tag: string): Promise<void> {
  const rows = rowsOf(siteId, tag);
  const database = analytics().tenantDatabase(teamId);
  for (const table of TENANT_TABLES) {
    // Visit states one insert each, as the writer's batches store them: an insert collapses a
    // state and its cancellation when they arrive together, and the move must copy them apart.
    if (table === 'visits') for (const row of rows.visits) await analytics().insert(table, [row], { database });
    else await analytics().insert(table, rows[table], { database });
  }
}

/** A new site of the test team with rows in every tenant table. */
async function seededSite(): Promise<Site> {
  const site = await createSite(db(), { teamId: t.team.id, domain: `moving-${++counter}.example` });
  await insertRows(t.team.id, site.id, `s${counter}`);
  return site;
}

/** Rows per table; for visits the net number (sum of signs), which background merges never change. */
async function counts(teamId: string, siteId: string): Promise<Record<TenantTable, number>> {
  const result = { ...NONE };
  for (const table of TENANT_TABLES) {
    const n = table === 'visits' ? 'sum(sign)' : 'count()';
    const [row] = await analytics().query<{ n: string }>(`SELECT ${n} AS n FROM {db:Identifier}.{table:Identifier} WHERE site_id = {site:UUID}`, {
      db: analytics().tenantDatabase(teamId),
      table,
      site: siteId,
    });
    result[table] = Number(row.n);
  }
  return result;
}

const teamOfSite = async (siteId: string) => (await db().query<{ team_id: string }>('SELECT team_id FROM sites WHERE id = $1', [siteId])).rows[0].team_id;

beforeAll(async () => {
  t = await startTestNode({ PLUMB_API_RATE_PER_SECOND: '100000', PLUMB_API_BURST: '100000' });
  destination = await createTeam(db(), { name: 'Destination team' });
  await analytics().ensureTenant(destination.id);
  [mover, siteAdmin, sourceOnlyAdmin, destinationOnlyAdmin] = await Promise.all([person(t), person(t), person(t), person(t)]);
  // The source team's owner owns its sites; a team admin is a site admin.
  await join(t.team.id, mover, 'owner');
  await join(destination.id, mover, 'owner');
  await join(t.team.id, siteAdmin, 'admin');
  await join(t.team.id, sourceOnlyAdmin, 'admin');
  await join(destination.id, sourceOnlyAdmin, 'member');
  await join(t.team.id, destinationOnlyAdmin, 'member');
  await join(destination.id, destinationOnlyAdmin, 'owner');
}, 60_000);

afterAll(() => t.stop());

describe('POST /api/sites/:id/transfer-team', () => {
  it('moves the site and every row of it into the destination tenant, and none stays behind', async () => {
    await insertRows(t.team.id, t.otherSite.id, 'neighbour');
    const before = await counts(t.team.id, t.site.id);
    const res = await as(t, mover, 'POST', `/api/sites/${t.site.id}/transfer-team`, { team_id: destination.id });
    expect([res.status, res.body]).toEqual([
      200,
      { site_id: t.site.id, source_team_id: t.team.id, destination_team_id: destination.id, status: 'completed' },
    ]);
    expect(await counts(destination.id, t.site.id)).toEqual(before);
    expect(await counts(t.team.id, t.site.id)).toEqual(NONE);
    // The neighbour in the source team keeps its rows.
    expect(await counts(t.team.id, t.otherSite.id)).toEqual(SEEDED);
    expect(await as(t, mover, 'GET', `/api/sites/${t.site.id}`)).toMatchObject({ status: 200, body: { site: { id: t.site.id, team_id: destination.id } } });
    // The ingest path now writes into the destination tenant.
    expect((await t.node.runtime.sites.byHostname('example.com'))?.tenant).toBe(analytics().tenantDatabase(destination.id));
    const audit = await db().query<{ team_id: string; details: string; subject_id: string }>(
      "SELECT team_id, details, subject_id FROM audit_log WHERE action = 'site.transferred' AND site_id = $1 ORDER BY team_id",
      [t.site.id],
    );
    // Each team's entry names the other team by its name at the move, with its id beside.
    expect(audit.rows).toEqual(
      [
        { team_id: t.team.id, details: 'moved example.com to team "Destination team"', subject_id: destination.id },
        { team_id: destination.id, details: 'moved example.com in from team "Test team"', subject_id: t.team.id },
      ].sort((a, b) => a.team_id.localeCompare(b.team_id)),
    );
  });

  it('copies every value unchanged, duplicates included', async () => {
    const site = await seededSite();
    const read = (teamId: string) =>
      analytics().query('SELECT * FROM {db:Identifier}.web_vitals WHERE site_id = {site:UUID} ORDER BY ts, metric', { db: analytics().tenantDatabase(teamId), site: site.id });
    const events = (teamId: string) =>
      analytics().query<{ props: unknown; revenue: unknown }>('SELECT props, revenue FROM {db:Identifier}.events WHERE site_id = {site:UUID} ORDER BY revenue', {
        db: analytics().tenantDatabase(teamId),
        site: site.id,
      });
    const vitals = await read(t.team.id);
    expect((await as(t, mover, 'POST', `/api/sites/${site.id}/transfer-team`, { team_id: destination.id })).status).toBe(200);
    expect(await read(destination.id)).toEqual(vitals);
    expect((await read(destination.id)).map((r) => (r as { value: number }).value)).toEqual([1200, 1200, 0.1]);
    expect(await events(destination.id)).toEqual([
      { props: { plan: 'p1' }, revenue: 1.5 },
      { props: { plan: 'p2' }, revenue: 3 },
    ]);
  });

  it('moves events without revenue (NULL), as most custom events are', async () => {
    const site = await createSite(db(), { teamId: t.team.id, domain: `moving-${++counter}.example` });
    const event = (plan: string) => ({ ts: '2026-02-01T10:00:00.000Z', site_id: site.id, event_id: crypto.randomUUID(), name: 'signup', props: { plan } });
    await analytics().insert('events', [event('free'), event('pro')], { database: analytics().tenantDatabase(t.team.id) });
    const res = await as(t, mover, 'POST', `/api/sites/${site.id}/transfer-team`, { team_id: destination.id });
    expect([res.status, res.body.status]).toEqual([200, 'completed']);
    expect(await counts(destination.id, site.id)).toEqual({ ...NONE, events: 2 });
  });

  it('moves a site back to where it came from', async () => {
    const site = await seededSite();
    expect((await as(t, mover, 'POST', `/api/sites/${site.id}/transfer-team`, { team_id: destination.id })).body).toMatchObject({ status: 'completed' });
    const back = await as(t, mover, 'POST', `/api/sites/${site.id}/transfer-team`, { team_id: t.team.id });
    expect(back.body).toEqual({ site_id: site.id, source_team_id: destination.id, destination_team_id: t.team.id, status: 'completed' });
    expect(await counts(t.team.id, site.id)).toEqual(SEEDED);
    expect(await counts(destination.id, site.id)).toEqual(NONE);
  });

  it('refuses a site admin who moves the site into a team of their own, so they cannot make themselves its owner', async () => {
    const site = await seededSite();
    const created = await as(t, siteAdmin, 'POST', '/api/user/teams', { name: 'My own team' });
    expect(created.status).toBe(201);
    const ownTeam = (created.body as { id: string }).id;
    expect(await as(t, siteAdmin, 'POST', `/api/sites/${site.id}/transfer-team`, { team_id: ownTeam })).toEqual(
      expect.objectContaining({ status: 403, body: { message: 'This needs the owner role on the site', code: 'forbidden' } }),
    );
    expect(await teamOfSite(site.id)).toBe(t.team.id);
    expect(await counts(t.team.id, site.id)).toEqual(SEEDED);
    const moves = await db().query("SELECT 1 FROM audit_log WHERE action = 'site.transferred' AND site_id = $1", [site.id]);
    expect(moves.rowCount).toBe(0);
  });

  it('answers 403 with a message unless the caller owns the site and administers both teams', async () => {
    const site = await seededSite();
    // Owning the site is not enough: moving it out needs the current team's admin role too.
    await grant(site.id, destinationOnlyAdmin, 'owner');
    expect(await as(t, destinationOnlyAdmin, 'POST', `/api/sites/${site.id}/transfer-team`, { team_id: destination.id })).toEqual(
      expect.objectContaining({ status: 403, body: { message: 'You must be an admin of the site’s current team to move the site out of it', code: 'forbidden' } }),
    );
    await grant(site.id, sourceOnlyAdmin, 'owner');
    expect(await as(t, sourceOnlyAdmin, 'POST', `/api/sites/${site.id}/transfer-team`, { team_id: destination.id })).toEqual(
      expect.objectContaining({ status: 403, body: { message: 'You must be an admin of the destination team to move a site into it', code: 'forbidden' } }),
    );
    const stranger = await person(t);
    expect((await as(t, stranger, 'POST', `/api/sites/${site.id}/transfer-team`, { team_id: destination.id })).status).toBe(404);
    const token = (await createApiClient(db(), { name: 'owner token', scopes: ['stats:read'], sites: [{ siteId: site.id, role: 'owner' }], ownerUserId: mover.id })).token;
    const byToken = await fetch(`${t.url}/api/sites/${site.id}/transfer-team`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ team_id: destination.id }),
    });
    expect(byToken.status).toBe(403);
    expect(await teamOfSite(site.id)).toBe(t.team.id);
    expect(await counts(t.team.id, site.id)).toEqual(SEEDED);
  });

  it('refuses the same team (400), an archived destination (409) and an unknown one (403 for a non-administrator)', async () => {
    const site = await seededSite();
    expect(await as(t, mover, 'POST', `/api/sites/${site.id}/transfer-team`, { team_id: t.team.id })).toMatchObject({
      status: 400,
      body: { message: 'team_id must name another team: the site already belongs to that one', code: 'validation_failed' },
    });
    const archived = await createTeam(db(), { name: 'Archived' });
    await join(archived.id, mover, 'owner');
    await db().query('UPDATE teams SET archived_at = now() WHERE id = $1', [archived.id]);
    expect(await as(t, mover, 'POST', `/api/sites/${site.id}/transfer-team`, { team_id: archived.id })).toMatchObject({
      status: 409,
      body: { message: 'The team is archived', code: 'conflict' },
    });
    expect((await as(t, mover, 'POST', `/api/sites/${site.id}/transfer-team`, { team_id: crypto.randomUUID() })).status).toBe(403);
    expect(await teamOfSite(site.id)).toBe(t.team.id);
  });
});

describe('transferSite (the use case)', () => {
  it('leaves the source whole, the destination empty and the site in its team when a copy fails midway', async () => {
    const site = await seededSite();
    const copied: TenantTable[] = [];
    const failing = transferSite(
      depsCopyingWith((table) => {
        copied.push(table);
        if (table === 'events') throw new Error('disk full (injected)');
      }),
      { siteId: site.id, destinationTeamId: destination.id, actor: mover },
    );
    await expect(failing).rejects.toMatchObject({
      code: 500,
      type: 'internal_error',
      message: 'Moving the site’s analytics failed; the site and its data stay in its current team. Try again later.',
    });
    expect(copied).toEqual(['hits', 'events']);
    expect(await counts(t.team.id, site.id)).toEqual(SEEDED);
    expect(await counts(destination.id, site.id)).toEqual(NONE);
    expect(await teamOfSite(site.id)).toBe(t.team.id);
    expect((await db().query('SELECT status, error FROM site_transfers WHERE site_id = $1', [site.id])).rows).toEqual([{ status: 'failed', error: 'disk full (injected)' }]);

    // Nothing is stuck: the move works when tried again.
    const retry = await as(t, mover, 'POST', `/api/sites/${site.id}/transfer-team`, { team_id: destination.id });
    expect(retry.body).toMatchObject({ status: 'completed' });
    expect(await counts(destination.id, site.id)).toEqual(SEEDED);
    expect(await counts(t.team.id, site.id)).toEqual(NONE);
  });

  it('moves rows the writer adds to the source during the move', async () => {
    const site = await seededSite();
    const result = await transferSite(
      // As if the ingest writer flushed events accepted before the switch.
      depsCopyingWith(async (table) => {
        if (table === 'hits') await insertRows(t.team.id, site.id, 'late');
      }),
      { siteId: site.id, destinationTeamId: destination.id, actor: mover },
    );
    expect(result).toEqual({ site_id: site.id, source_team_id: t.team.id, destination_team_id: destination.id, status: 'completed' });
    expect(await counts(destination.id, site.id)).toEqual({ hits: 6, events: 4, web_vitals: 6, ai_fetches: 4, visits: 2, ...imported(() => 4) });
    expect(await counts(t.team.id, site.id)).toEqual(NONE);
  });

  it('sweeps rows that reach the old tenant after the move into the new one', async () => {
    const site = await seededSite();
    await transferSite(deps(), { siteId: site.id, destinationTeamId: destination.id, actor: mover });
    await insertRows(t.team.id, site.id, 'straggler');
    const left = await sweepMovedSite(deps(), { site_id: site.id, source_team_id: t.team.id, destination_team_id: destination.id });
    expect(left).toBe(0);
    expect(await counts(destination.id, site.id)).toEqual({ hits: 6, events: 4, web_vitals: 6, ai_fetches: 4, visits: 2, ...imported(() => 4) });
    expect(await counts(t.team.id, site.id)).toEqual(NONE);
  });

  it('refuses a second move, and a delete, while one runs (409)', async () => {
    const site = await seededSite();
    let release = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    let started = () => {};
    const copying = new Promise<void>((resolve) => (started = resolve));
    const first = transferSite(
      depsCopyingWith(async (table) => {
        if (table !== 'hits') return;
        started();
        await gate;
      }),
      { siteId: site.id, destinationTeamId: destination.id, actor: mover },
    );
    await copying;
    expect(await as(t, mover, 'POST', `/api/sites/${site.id}/transfer-team`, { team_id: destination.id })).toMatchObject({
      status: 409,
      body: { message: 'Another transfer of this site is running; try again when it has finished', code: 'conflict' },
    });
    await db().query("INSERT INTO site_members (site_id, user_id, role) VALUES ($1, $2, 'owner')", [site.id, mover.id]);
    expect((await as(t, mover, 'DELETE', `/api/sites/${site.id}`)).status).toBe(409);
    release();
    await expect(first).resolves.toMatchObject({ status: 'completed' });
    expect(await counts(destination.id, site.id)).toEqual(SEEDED);
  });
});
