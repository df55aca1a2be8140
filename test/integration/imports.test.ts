// Imports through the API on a real node: GoatCounter and Umami exports built here from their
// documented formats with known totals are uploaded in chunks, validated, run, and then read back
// through the stats API; uploads resume after a dropped connection and refuse a wrong checksum;
// hostile files fail with the file and line named and nothing imported; a failure midway and a
// deletion leave no row behind; an import interrupted by its leader's death runs again from a
// clean slate; webhooks and the team audit log record the outcome.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { gzipSync } from 'node:zlib';
import { importsRunnerJob } from '../../lib/imports/runner.ts';
import { createSite, type Site } from '../../lib/sites/sites.ts';
import { type Person, person } from '../support/accounts.ts';
import { waitFor } from '../support/instance.ts';
import { startTestNode, type TestNode } from '../support/node.ts';
import { EXPORT_DAYS, exportFiles, exportRows, total } from '../support/plausible-export.ts';
import { zipOf } from '../support/zip.ts';
import { type Receiver, startReceiver } from '../support/webhook-receiver.ts';

const GOAT_HEADER = '2Path,Title,Event,UserAgent,Browser,System,Session,Bot,Referrer,Referrer scheme,Screen size,Location,FirstVisit,Date';
/** Four pageviews by three sessions over two days, one event, one bot line and one line dated 1999. */
const GOATCOUNTER = [
  GOAT_HEADER,
  '/,Home,false,,Firefox 120,Linux,s1,0,news.ycombinator.com/item?id=1,h,"1920,1080,1",NL,true,2024-03-01T10:00:00Z',
  '/pricing,Pricing,false,,Firefox 120,Linux,s1,0,,,"1920,1080,1",NL,false,2024-03-01T10:05:00Z',
  'signup,,true,,Firefox 120,Linux,s1,0,,,"1920,1080,1",NL,false,2024-03-01T10:06:00Z',
  '/,Home,false,,Chrome 121,Windows 10,s2,0,google.com/,h,"390,844,3",US-TX,true,2024-03-01T12:00:00Z',
  '/blog/a,A,false,,Chrome 121,Windows 10,s3,0,,,"1280,800,1",DE,true,2024-03-02T09:00:00Z',
  '/,Home,false,,Bot,Linux,s4,3,,,,,true,2024-03-02T09:30:00Z',
  '/old,Old,false,,Firefox 120,Linux,s5,0,,,,,true,1999-12-31T23:00:00Z',
].join('\n');

const UMAMI_HEADER = 'website_id,session_id,visit_id,event_id,created_at,hostname,url_path,url_query,referrer_path,referrer_query,referrer_domain,page_title,event_type,event_name,browser,os,device,screen,country';
/** Four pageviews of two visitors in three visits, one custom event, and one row of another event type. */
const UMAMI = [
  UMAMI_HEADER,
  'w1,u1,v1,e1,2024-04-10 08:00:00,example.com,/,utm_source=newsletter&utm_medium=email,,,,Home,1,,chrome,Mac OS,desktop,1440x900,FR',
  'w1,u1,v1,e2,2024-04-10 08:01:00,example.com,/docs,,,,,Docs,1,,chrome,Mac OS,desktop,1440x900,FR',
  'w1,u1,v1,e3,2024-04-10 08:02:00,example.com,/docs,,,,,Docs,2,download,chrome,Mac OS,desktop,1440x900,FR',
  'w1,u1,v2,e4,2024-04-11 09:00:00,example.com,/docs,,/search,q=x,google.com,Docs,1,,chrome,Mac OS,desktop,1440x900,FR',
  'w1,u2,v3,e5,2024-04-11 10:00:00,example.com,/,,,,,Home,1,,ios,iOS,mobile,390x844,GB',
  'w1,u2,v3,e6,2024-04-11 10:00:05,example.com,/x,,,,,X,3,,ios,iOS,mobile,390x844,GB',
].join('\n');

let t: TestNode;
let admin: Person;
let editor: Person;
let hooks: Receiver;
const MAX_FILE_BYTES = 1024 * 1024;

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

type ImportBody = {
  id: string;
  state: string;
  files: { index: number; name: string; size: number; received: number; complete: boolean }[];
  manifest: Record<string, unknown> & { rows_accepted: number; skipped: { reason: string; count: number; examples: { file: string; line: number; message: string }[] }[] };
  progress: { rows_read: number; rows_total: number | null } | null;
  error: { message: string; file: string | null; line: number | null } | null;
};

async function api(who: Person, method: string, path: string, body?: unknown) {
  const res = await fetch(`${t.url}${path}`, {
    method,
    headers: { Cookie: who.cookie, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as Record<string, unknown>, headers: res.headers };
}


async function newSite(domain: string): Promise<Site> {
  const site = await createSite(t.node.runtime.metadata(), { teamId: t.team.id, domain });
  await t.node.runtime.metadata().query('INSERT INTO site_members (site_id, user_id, role) VALUES ($1, $2, $3), ($1, $4, $5)', [site.id, admin.id, 'admin', editor.id, 'editor']);
  return site;
}

const importsOf = (site: Site) => `/api/sites/${site.id}/imports`;

async function create(site: Site, source: string, files: [string, Buffer][]) {
  return api(admin, 'POST', importsOf(site), { source, files: files.map(([name, bytes]) => ({ name, size: bytes.length, sha256: sha256(bytes) })) });
}

async function put(site: Site, importId: string, index: number, offset: number, bytes: Buffer) {
  const res = await fetch(`${t.url}${importsOf(site)}/${importId}/files/${index}?offset=${offset}`, {
    method: 'PUT',
    headers: { Cookie: admin.cookie, 'Content-Type': 'application/octet-stream' },
    body: new Uint8Array(bytes),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> & { details?: { received: number } } };
}

async function until(site: Site, importId: string, states: string[]): Promise<ImportBody> {
  let last: ImportBody | undefined;
  await waitFor(
    async () => {
      last = (await api(admin, 'GET', `${importsOf(site)}/${importId}`)).body as unknown as ImportBody;
      return states.includes(last.state);
    },
    30_000,
    () => `import ${importId} did not reach ${states.join('/')}: ${JSON.stringify(last)}`,
  );
  return last!;
}

/** Creates an import, uploads every file whole, and validates it; answers the import once validated or failed. */
async function uploaded(site: Site, source: string, files: [string, Buffer][]): Promise<ImportBody> {
  const created = await create(site, source, files);
  expect(created.status).toBe(201);
  const id = created.body.id as string;
  for (const [index, [, bytes]] of files.entries()) expect((await put(site, id, index, 0, bytes)).status).toBe(200);
  expect((await api(admin, 'POST', `${importsOf(site)}/${id}/validate`)).status).toBe(202);
  return until(site, id, ['validated', 'failed']);
}

async function imported(site: Site, source: string, files: [string, Buffer][]): Promise<ImportBody> {
  const validated = await uploaded(site, source, files);
  expect([validated.state, validated.error]).toEqual(['validated', null]);
  const started = await api(admin, 'POST', `${importsOf(site)}/${validated.id}/start`);
  expect([started.status, started.body.state]).toEqual([202, 'running']);
  return until(site, validated.id, ['completed', 'failed']);
}

async function stats(site: Site, from: string, to: string) {
  const res = await api(admin, 'GET', `/api/sites/${site.id}/stats?from=${from}&to=${to}`);
  expect(res.status).toBe(200);
  return res.body as { kpis: { visitors: number; visits: number; pageviews: number } };
}

async function pages(site: Site, from: string, to: string) {
  const res = await api(admin, 'GET', `/api/sites/${site.id}/stats/breakdown?from=${from}&to=${to}&dimension=pages`);
  expect(res.status).toBe(200);
  return (res.body.rows as { value: string; visitors: number }[]).map((r) => [r.value, r.visitors]);
}

type Hit = { ts: string; path: string; referrer_source: string; channel: string; utm_source: string; browser: string; os: string; device: string; country: string };
const byTime = (hits: Hit[]) => hits.sort((a, b) => a.ts.localeCompare(b.ts));

/** Rows carrying this import's id in every table an import writes. */
async function rowsOf(importId: string): Promise<number> {
  const store = t.node.runtime.analytics();
  const db = store.tenantDatabase(t.team.id);
  let total = 0;
  for (const table of ['hits', 'events', 'visits']) {
    const [row] = await store.query<{ n: string }>(`SELECT toString(count()) AS n FROM {db:Identifier}.${table} WHERE import_id = {id:UUID}`, { db, id: importId });
    total += Number(row.n);
  }
  return total;
}

beforeAll(async () => {
  hooks = await startReceiver();
  t = await startTestNode({
    PLUMB_API_RATE_PER_SECOND: '100000',
    PLUMB_API_BURST: '100000',
    PLUMB_IMPORT_MAX_FILE_BYTES: String(MAX_FILE_BYTES),
    PLUMB_WEBHOOK_ALLOW_DEVELOPMENT_TARGETS: 'true',
    PLUMB_WEBHOOK_SWEEP_SECONDS: '1',
  });
  admin = await person(t);
  editor = await person(t);
}, 60_000);

afterAll(async () => {
  await t?.stop();
  await hooks?.close();
});

describe('GET /api/sites/:id/importers', () => {
  it('lists the sources with their files and limits', async () => {
    const site = await newSite('importers.example');
    const res = await api(admin, 'GET', `/api/sites/${site.id}/importers`);
    expect(res.status).toBe(200);
    const importers = res.body.importers as { id: string; kind: string; extensions: string[]; max_files: number; max_file_bytes: number }[];
    expect(importers.map((i) => [i.id, i.kind, i.extensions, i.max_file_bytes])).toEqual([
      ['plausible', 'aggregate', ['.zip', '.csv'], MAX_FILE_BYTES],
      ['goatcounter', 'raw', ['.csv', '.csv.gz', '.zip'], MAX_FILE_BYTES],
      ['umami', 'raw', ['.csv', '.csv.gz', '.zip'], MAX_FILE_BYTES],
      ['plumb', 'raw', ['.zip', '.xlsx'], MAX_FILE_BYTES],
    ]);
  });

  it('is for site admins: an editor is refused', async () => {
    const site = await newSite('importers-editor.example');
    expect((await api(editor, 'GET', `/api/sites/${site.id}/importers`)).status).toBe(403);
  });
});

describe('a GoatCounter import', () => {
  let site: Site;
  let done: ImportBody;
  let hook: { events: string[] };

  beforeAll(async () => {
    site = await newSite('goat.example');
    const created = await api(admin, 'POST', `/api/sites/${site.id}/webhooks`, { name: 'imports', url: `${hooks.url}/goat`, events: ['import.completed', 'import.failed'] });
    expect(created.status).toBe(201);
    hook = created.body.webhook as { events: string[] };
    done = await imported(site, 'goatcounter', [['goatcounter-export.csv.gz', gzipSync(GOATCOUNTER)]]);
  }, 60_000);

  it('completes with a manifest of what it read, accepted and left out, and why', () => {
    expect(done.state).toBe('completed');
    expect(done.manifest).toMatchObject({
      source: 'goatcounter',
      from: '2024-03-01',
      to: '2024-03-02',
      rows_scanned: 7,
      rows_accepted: 5,
      rows_skipped: 2,
      overlap: { days: 0, from: null, to: null },
    });
    expect(done.manifest.skipped).toEqual([
      { reason: 'bot request', count: 1, examples: [{ file: 'goatcounter-export.csv', line: 7, message: 'GoatCounter marked it as a bot (3)' }] },
      { reason: 'dated before 2000', count: 1, examples: [{ file: 'goatcounter-export.csv', line: 8, message: 'dated 1999-12-31T23:00:00.000Z, before 2000' }] },
    ]);
    expect(done.progress).toEqual({ rows_read: 7, rows_total: 7 });
  });

  it('shows exactly its visitors, visits, pageviews and top pages in the stats', async () => {
    expect((await stats(site, '2024-03-01', '2024-03-02')).kpis).toMatchObject({ visitors: 3, visits: 3, pageviews: 4 });
    expect(await pages(site, '2024-03-01', '2024-03-02')).toEqual([
      ['/', 2],
      ['/blog/a', 1],
      ['/pricing', 1],
    ]);
  });

  it('writes its events as custom events, and classifies referrers as ingest does', async () => {
    const events = await t.rowsNow<{ name: string }>('events', 'site_id = {site:UUID}', { site: site.id });
    expect(events.map((e) => e.name)).toEqual(['signup']);
    const hits = byTime(await t.rowsNow<Hit>('hits', 'site_id = {site:UUID}', { site: site.id }));
    expect(hits.map((h) => [h.path, h.referrer_source, h.channel, h.browser, h.os, h.device, h.country])).toEqual([
      ['/', 'Hacker News', 'social', 'Firefox', 'Linux', 'desktop', 'NL'],
      ['/pricing', '', 'direct', 'Firefox', 'Linux', 'desktop', 'NL'],
      ['/', 'Google', 'search', 'Chrome', 'Windows', 'mobile', 'US'],
      ['/blog/a', '', 'direct', 'Chrome', 'Windows', 'desktop', 'DE'],
    ]);
  });

  it('announces its completion to webhooks and the team audit log, and drops its staged bytes', async () => {
    expect(hook.events).toEqual(['import.completed', 'import.failed']);
    const [delivery] = await hooks.waitFor('/goat', 1);
    const body = JSON.parse(delivery.raw.toString('utf8'));
    expect([body.type, body.data]).toEqual(['import.completed', { site_id: site.id, import_id: done.id, source: 'goatcounter', rows_accepted: 5, from: '2024-03-01', to: '2024-03-02' }]);
    const audit = await t.node.runtime.metadata().query<{ action: string }>("SELECT action FROM audit_log WHERE site_id = $1 AND action LIKE 'import.%' ORDER BY seq", [site.id]);
    expect(audit.rows.map((r) => r.action)).toEqual(['import.created', 'import.started', 'import.completed']);
    const staged = await t.node.runtime.metadata().query('SELECT 1 FROM import_chunks WHERE import_id = $1', [done.id]);
    expect(staged.rowCount).toBe(0);
  });

  it('lists the import, newest first', async () => {
    const res = await api(admin, 'GET', importsOf(site));
    expect((res.body.imports as { id: string; state: string }[]).map((i) => [i.id, i.state])).toEqual([[done.id, 'completed']]);
  });

  it('DELETE removes every row it added, and the record', async () => {
    expect(await rowsOf(done.id)).toBe(8); // 4 hits, 1 event, 3 visits
    const res = await api(admin, 'DELETE', `${importsOf(site)}/${done.id}`);
    expect(res.status).toBe(204);
    expect(await rowsOf(done.id)).toBe(0);
    expect((await stats(site, '2024-03-01', '2024-03-02')).kpis).toMatchObject({ visitors: 0, visits: 0, pageviews: 0 });
    expect((await api(admin, 'GET', `${importsOf(site)}/${done.id}`)).status).toBe(404);
  });
});

describe('a Plausible import', () => {
  let site: Site;
  let done: ImportBody;
  const rows = exportRows();

  beforeAll(async () => {
    site = await newSite('plausible.example');
    done = await imported(site, 'plausible', [['plausible-export.zip', await zipOf(exportFiles())]]);
  }, 60_000);

  it('completes with every table of the export as a dataset over its 60 days', () => {
    expect(done.state).toBe('completed');
    expect(done.manifest).toMatchObject({ source: 'plausible', from: EXPORT_DAYS[0], to: EXPORT_DAYS.at(-1), rows_skipped: 0 });
    expect((done.manifest.datasets as { name: string }[]).map((d) => d.name).sort()).toEqual(Object.keys(rows).sort());
  });

  it('shows the export’s own totals in the stats, and none with with_imported=false', async () => {
    const kpis = (await stats(site, EXPORT_DAYS[0], EXPORT_DAYS.at(-1)!)).kpis;
    expect(kpis).toMatchObject({ visitors: total(rows.imported_visitors, 'visitors'), visits: total(rows.imported_visitors, 'visits'), pageviews: total(rows.imported_visitors, 'pageviews') });
    const without = await api(admin, 'GET', `/api/sites/${site.id}/stats?from=${EXPORT_DAYS[0]}&to=${EXPORT_DAYS.at(-1)}&with_imported=false`);
    expect((without.body as { kpis: { visits: number } }).kpis.visits).toBe(0);
  });

  it('is gone from the stats once deleted', async () => {
    expect((await api(admin, 'DELETE', `${importsOf(site)}/${done.id}`)).status).toBe(204);
    expect((await stats(site, EXPORT_DAYS[0], EXPORT_DAYS.at(-1)!)).kpis.visits).toBe(0);
  });
});

describe('an Umami import', () => {
  let site: Site;
  let done: ImportBody;

  beforeAll(async () => {
    site = await newSite('umami.example');
    done = await imported(site, 'umami', [['umami.zip', await zipOf([['export/website_event.csv', UMAMI]])]]);
  }, 60_000);

  it('completes, leaving out the rows that are neither pageviews nor custom events', () => {
    expect(done.state).toBe('completed');
    expect(done.manifest).toMatchObject({ from: '2024-04-10', to: '2024-04-11', rows_scanned: 6, rows_accepted: 5, rows_skipped: 1, warnings: [] });
    expect(done.manifest.skipped).toEqual([
      { reason: 'not a pageview or custom event', count: 1, examples: [{ file: 'export/website_event.csv', line: 7, message: 'event_type 3' }] },
    ]);
  });

  it('groups rows into visits by Umami’s visit id and visitors by its session id', async () => {
    expect((await stats(site, '2024-04-10', '2024-04-11')).kpis).toMatchObject({ visitors: 2, visits: 3, pageviews: 4 });
    expect(await pages(site, '2024-04-10', '2024-04-11')).toEqual([
      ['/', 2],
      ['/docs', 1],
    ]);
    const hits = byTime(await t.rowsNow<Hit>('hits', 'site_id = {site:UUID}', { site: site.id }));
    expect(hits.map((h) => [h.path, h.utm_source, h.channel, h.referrer_source, h.browser, h.os, h.device])).toEqual([
      ['/', 'newsletter', 'email', 'Newsletter', 'Chrome', 'macOS', 'desktop'],
      ['/docs', '', 'direct', '', 'Chrome', 'macOS', 'desktop'],
      ['/docs', '', 'search', 'Google', 'Chrome', 'macOS', 'desktop'],
      ['/', '', 'direct', '', 'Safari', 'iOS', 'mobile'],
    ]);
    const events = await t.rowsNow<{ name: string; path: string }>('events', 'site_id = {site:UUID}', { site: site.id });
    expect(events.map((e) => [e.name, e.path])).toEqual([['download', '/docs']]);
  });

  it('warns about a file holding several Umami websites', async () => {
    const other = await newSite('umami-two.example');
    const two = `${UMAMI}\nw2,u9,v9,e9,2024-04-11 11:00:00,example.com,/,,,,,Home,1,,chrome,Mac OS,desktop,1440x900,FR`;
    const validated = await uploaded(other, 'umami', [['events.csv', Buffer.from(two)]]);
    expect(validated.state).toBe('validated');
    expect(validated.manifest.warnings).toEqual(['events.csv holds rows of 2 Umami websites (w1, w2); all of them are imported into this site']);
    // A dry run writes nothing.
    expect(await rowsOf(validated.id)).toBe(0);
  });
});

describe('PUT /api/sites/:id/imports/:importId/files/:index', () => {
  let site: Site;
  beforeAll(async () => {
    site = await newSite('uploads.example');
  });

  it('resumes after a connection dropped mid-chunk: the import says how much arrived, the rest follows from there', async () => {
    const bytes = Buffer.from(GOATCOUNTER);
    const created = await create(site, 'goatcounter', [['resumed.csv', bytes]]);
    const id = created.body.id as string;
    const first = await put(site, id, 0, 0, bytes.subarray(0, 100));
    expect(first.body).toEqual({ index: 0, name: 'resumed.csv', size: bytes.length, received: 100, complete: false });
    // The second chunk's request is cut after half its declared body.
    await new Promise<void>((resolve) => {
      const req = httpRequest(`${t.url}${importsOf(site)}/${id}/files/0?offset=100`, {
        method: 'PUT',
        headers: { Cookie: admin.cookie, 'Content-Type': 'application/octet-stream', 'Content-Length': String(bytes.length - 100) },
      });
      req.on('error', () => resolve());
      req.write(bytes.subarray(100, 200), () => setTimeout(() => {
        req.destroy();
        resolve();
      }, 100));
    });
    const after = (await api(admin, 'GET', `${importsOf(site)}/${id}`)).body as unknown as ImportBody;
    expect(after.files[0]).toMatchObject({ received: 100, complete: false });
    const wrong = await put(site, id, 0, 0, bytes.subarray(0, 100));
    expect([wrong.status, wrong.body.code, wrong.body.details]).toEqual([409, 'conflict', { received: 100 }]);
    const rest = await put(site, id, 0, after.files[0].received, bytes.subarray(100));
    expect(rest.body).toEqual({ index: 0, name: 'resumed.csv', size: bytes.length, received: bytes.length, complete: true });
    const more = await put(site, id, 0, bytes.length, Buffer.from('x'));
    expect(more.status).toBe(409);
  });

  it('refuses a file whose SHA-256 does not match, and discards its bytes', async () => {
    const bytes = Buffer.from(GOATCOUNTER);
    const res = await api(admin, 'POST', importsOf(site), { source: 'goatcounter', files: [{ name: 'tampered.csv', size: bytes.length, sha256: sha256(Buffer.from('something else')) }] });
    const id = res.body.id as string;
    const sent = await put(site, id, 0, 0, bytes);
    expect(sent.status).toBe(422);
    expect(sent.body.message).toContain('tampered.csv: the SHA-256 of the bytes received is');
    expect(sent.body.details).toEqual({ received: 0 });
    const after = (await api(admin, 'GET', `${importsOf(site)}/${id}`)).body as unknown as ImportBody;
    expect(after.files[0]).toMatchObject({ received: 0, complete: false });
    expect((await t.node.runtime.metadata().query('SELECT 1 FROM import_chunks WHERE import_id = $1', [id])).rowCount).toBe(0);
    expect((await api(admin, 'POST', `${importsOf(site)}/${id}/validate`)).status).toBe(409);
  });

  it('refuses a chunk past the declared size, a JSON body, and a body over 8 MiB', async () => {
    const bytes = Buffer.from('2Path,Date\n');
    const id = (await create(site, 'goatcounter', [['small.csv', bytes]])).body.id as string;
    const over = await put(site, id, 0, 0, Buffer.concat([bytes, Buffer.from('extra')]));
    expect([over.status, over.body.message]).toEqual([422, `The chunk would take small.csv to ${bytes.length + 5} bytes; its declared size is ${bytes.length}`]);
    const json = await fetch(`${t.url}${importsOf(site)}/${id}/files/0?offset=0`, { method: 'PUT', headers: { Cookie: admin.cookie, 'Content-Type': 'application/json' }, body: '{}' });
    expect(json.status).toBe(415);
    const huge = await put(site, id, 0, 0, Buffer.alloc(8 * 1024 * 1024 + 1));
    expect(huge.status).toBe(413);
  });
});

describe('POST /api/sites/:id/imports refusals', () => {
  let site: Site;
  beforeAll(async () => {
    site = await newSite('refusals.example');
  });

  it('refuses a file over the size limit before anything is uploaded', async () => {
    const res = await api(admin, 'POST', importsOf(site), { source: 'goatcounter', files: [{ name: 'huge.csv', size: MAX_FILE_BYTES + 1, sha256: 'a'.repeat(64) }] });
    expect([res.status, res.body.code, res.body.message]).toEqual([413, 'payload_too_large', `huge.csv is ${MAX_FILE_BYTES + 1} bytes; an import accepts files of at most ${MAX_FILE_BYTES} bytes`]);
  });

  it.each([
    ['../x.csv', 'files[0].name must be a file name without a folder (no / or \\)'],
    ['a/b.csv', 'files[0].name must be a file name without a folder (no / or \\)'],
    ['bad\u0007name.csv', 'files[0].name must not contain control characters'],
    ['export.xlsx', 'files[0].name must end with .csv, .csv.gz, .zip for GoatCounter'],
  ])('refuses the file name %j', async (name, message) => {
    const res = await api(admin, 'POST', importsOf(site), { source: 'goatcounter', files: [{ name, size: 10, sha256: 'a'.repeat(64) }] });
    expect([res.status, res.body.fields]).toEqual([400, [expect.objectContaining({ field: 'files[0].name', message })]]);
  });

  it('refuses a source Plumb has no importer for', async () => {
    const res = await api(admin, 'POST', importsOf(site), { source: 'matomo', files: [{ name: 'export.csv', size: 10, sha256: 'a'.repeat(64) }] });
    expect([res.status, res.body.fields]).toEqual([400, [expect.objectContaining({ field: 'source' })]]);
  });

  it('starts only a validated import', async () => {
    const bytes = Buffer.from(GOATCOUNTER);
    const id = (await create(site, 'goatcounter', [['early.csv', bytes]])).body.id as string;
    const res = await api(admin, 'POST', `${importsOf(site)}/${id}/start`);
    expect([res.status, res.body.message]).toEqual([409, 'The import is pending; only a validated import can start']);
  });
});

describe('asking for a dry run or a run', () => {
  /** Counts the imports.queued events this node hears: the leader's runner is woken by them. */
  async function listening() {
    let heard = 0;
    const name = `imports-queued-listener-${crypto.randomUUID()}`;
    const listener = t.node.broker.createService({ name, events: { 'imports.queued': () => void heard++ } });
    await t.node.broker.waitForServices(name);
    return { heard: () => heard, stop: () => t.node.broker.destroyService(listener) };
  }

  it('wakes the leader once the request has committed, for the dry run and for the run', async () => {
    const site = await newSite('wake.example');
    const listener = await listening();
    try {
      const validated = await uploaded(site, 'goatcounter', [['wake.csv', Buffer.from(GOATCOUNTER)]]);
      expect([validated.state, listener.heard()]).toEqual(['validated', 1]);
      expect((await api(admin, 'POST', `${importsOf(site)}/${validated.id}/start`)).status).toBe(202);
      expect((await until(site, validated.id, ['completed', 'failed'])).state).toBe('completed');
      expect(listener.heard()).toBe(2);
    } finally {
      await listener.stop();
    }
  });

  it('wakes no one when the request is refused', async () => {
    const site = await newSite('no-wake.example');
    const listener = await listening();
    try {
      const bytes = Buffer.from(GOATCOUNTER);
      const id = (await create(site, 'goatcounter', [['early.csv', bytes]])).body.id as string;
      expect((await api(admin, 'POST', `${importsOf(site)}/${id}/validate`)).status).toBe(409);
      expect((await api(admin, 'POST', `${importsOf(site)}/${id}/start`)).status).toBe(409);
      expect(listener.heard()).toBe(0);
    } finally {
      await listener.stop();
    }
  });
});

describe('hostile files: the import fails naming the file and line, and nothing is imported', () => {
  let site: Site;
  beforeAll(async () => {
    site = await newSite('hostile.example');
  });

  const failedWith = async (files: [string, Buffer][], source = 'goatcounter') => {
    const result = await uploaded(site, source, files);
    expect(result.state).toBe('failed');
    expect(await rowsOf(result.id)).toBe(0);
    return result.error;
  };

  it('malformed CSV: an unclosed quote', async () => {
    const text = `${GOAT_HEADER}\n/,Home,false,,Firefox 120,Linux,s1,0,,,"1920,1080,1,NL,true,2024-03-01T10:00:00Z\n`;
    expect(await failedWith([['quote.csv', Buffer.from(text)]])).toEqual({ message: 'quote.csv, line 2: a quoted field is never closed', file: 'quote.csv', line: 2 });
  });

  it('wrong columns', async () => {
    expect(await failedWith([['plausible.csv', Buffer.from('date,visitors,pageviews\n2024-01-01,1,2\n')]])).toEqual({
      message: 'plausible.csv, line 1: missing columns 2Path, Event, Session, Bot, Date; found date, visitors, pageviews',
      file: 'plausible.csv',
      line: 1,
    });
    expect(await failedWith([['goat.csv', Buffer.from('website_id,session_id\nw,s\n')]], 'umami')).toMatchObject({ file: 'goat.csv', line: 1 });
  });

  it('every row dated out of range', async () => {
    const text = `${GOAT_HEADER}\n/,Home,false,,Firefox 120,Linux,s1,0,,,,NL,true,1990-01-01T00:00:00Z\n/,Home,false,,Firefox 120,Linux,s1,0,,,,NL,true,2999-01-01T00:00:00Z\n`;
    expect(await failedWith([['dates.csv', Buffer.from(text)]])).toEqual({
      message: 'dates.csv, line 2: none of its 2 rows can be imported (dated 1990-01-01T00:00:00.000Z, before 2000)',
      file: 'dates.csv',
      line: 2,
    });
  });

  it('a zip bomb', async () => {
    const error = await failedWith([['bomb.zip', await zipOf([['zeros.csv', Buffer.alloc(4 * 1024 * 1024)]])]]);
    expect(error).toMatchObject({ file: 'bomb.zip', line: null });
    expect(error?.message).toMatch(/^bomb\.zip: entry "zeros\.csv" expands \d+ times; refused as a zip bomb$/);
  });

  it('a zip entry that climbs out of its folder', async () => {
    const archive = await zipOf([['zz/x.csv', GOATCOUNTER]]);
    const hostile = Buffer.from(archive.toString('latin1').replaceAll('zz/x.csv', '../x.csv'), 'latin1');
    expect(await failedWith([['traversal.zip', hostile]])).toEqual({ message: 'traversal.zip: entry "../x.csv" climbs out of the archive folder (..)', file: 'traversal.zip', line: null });
  });

  it('sends import.failed with the error', async () => {
    const other = await newSite('hostile-hook.example');
    expect((await api(admin, 'POST', `/api/sites/${other.id}/webhooks`, { name: 'fail', url: `${hooks.url}/failed`, events: ['import.failed'] })).status).toBe(201);
    const result = await uploaded(other, 'goatcounter', [['empty.csv', Buffer.from('nothing,here\n')]]);
    const [delivery] = await hooks.waitFor('/failed', 1);
    expect(JSON.parse(delivery.raw.toString('utf8')).data).toEqual({ site_id: other.id, import_id: result.id, source: 'goatcounter', error: result.error?.message });
  });
});

describe('a failure midway', () => {
  it('leaves nothing: rows written before the bad line are removed', async () => {
    const site = await newSite('midway.example');
    const good = Array.from({ length: 12_000 }, (_, i) => `/p${i % 50},T,false,,Firefox 120,Linux,s${i % 700},0,,,,NL,true,2024-05-01T${String(Math.floor(i / 600)).padStart(2, '0')}:00:00Z`);
    const bytes = Buffer.from([GOAT_HEADER, ...good].join('\n'));
    const validated = await uploaded(site, 'goatcounter', [['big.csv', bytes]]);
    expect(validated.manifest.rows_accepted).toBe(12_000);
    // The staged bytes change after validation: the run meets an unclosed quote after 11,000 rows.
    const db = t.node.runtime.metadata();
    const broken = Buffer.from([GOAT_HEADER, ...good.slice(0, 11_000), '"broken', ...good.slice(11_001)].join('\n'));
    await db.query('DELETE FROM import_chunks WHERE import_id = $1', [validated.id]);
    await db.query('INSERT INTO import_chunks (import_id, file_index, "offset", data) VALUES ($1, 0, 0, $2)', [validated.id, broken]);
    await api(admin, 'POST', `${importsOf(site)}/${validated.id}/start`);
    const result = await until(site, validated.id, ['completed', 'failed']);
    expect(result.error).toEqual({ message: 'big.csv, line 11002: a quoted field is never closed', file: 'big.csv', line: 11002 });
    expect(await rowsOf(validated.id)).toBe(0);
  }, 60_000);
});

const ROWS_OF_A_LONG_RUN = 120_000;

describe('DELETE /api/sites/:id/imports/:importId of a running import', () => {
  it('stops it, and no row of it stays', async () => {
    const site = await newSite('deleted-running.example');
    // Enough rows that the run is still going when its first progress is written, a second in.
    const rows = Array.from({ length: ROWS_OF_A_LONG_RUN }, (_, i) => `/p${i % 50},,false,,,,s${i % 900},0,,,,,,2024-06-01T${String(Math.floor(i / 6000)).padStart(2, '0')}:00:00Z`);
    const validated = await uploaded(site, 'goatcounter', [['large.csv.gz', gzipSync([GOAT_HEADER, ...rows].join('\n'))]]);
    await api(admin, 'POST', `${importsOf(site)}/${validated.id}/start`);
    // Deleted once the run has read rows, before it ends.
    let seen: ImportBody | undefined;
    await waitFor(
      async () => {
        seen = (await api(admin, 'GET', `${importsOf(site)}/${validated.id}`)).body as unknown as ImportBody;
        return seen.state !== 'running' || (seen.progress?.rows_read ?? 0) > 0;
      },
      20_000,
      () => 'the run never reported progress',
    );
    expect([seen?.state, seen?.progress?.rows_total]).toEqual(['running', ROWS_OF_A_LONG_RUN]);
    expect((await api(admin, 'DELETE', `${importsOf(site)}/${validated.id}`)).status).toBe(204);
    await waitFor(async () => (await rowsOf(validated.id)) === 0, 20_000, () => 'the deleted import kept rows');
    // The run noticed within a second and wrote nothing more.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(await rowsOf(validated.id)).toBe(0);
    const audit = await t.node.runtime.metadata().query<{ action: string }>("SELECT action FROM audit_log WHERE site_id = $1 AND action LIKE 'import.%' ORDER BY seq", [site.id]);
    expect(audit.rows.map((r) => r.action)).toEqual(['import.created', 'import.started', 'import.deleted']);
  }, 60_000);
});

describe('an import whose leader died while it ran', () => {
  /** A validated import left `running` under an old epoch, with rows its dead run had written. */
  async function interrupted(domain: string, attempts: number) {
    const site = await newSite(domain);
    const validated = await uploaded(site, 'goatcounter', [['export.csv', Buffer.from(GOATCOUNTER)]]);
    const db = t.node.runtime.metadata();
    const store = t.node.runtime.analytics();
    await store.insert('hits', [{ ts: '2024-03-01T00:00:00.000Z', site_id: site.id, session_id: '1', visitor_id: '1', hit_id: crypto.randomUUID(), path: '/half-written', hostname: domain, import_id: validated.id }], {
      database: store.tenantDatabase(t.team.id),
    });
    await db.query("UPDATE imports SET state = 'running', claimed_epoch = 5, attempts = $2 WHERE id = $1", [validated.id, attempts]);
    return { site, id: validated.id };
  }

  /** A new leader (epoch 10) takes over the imports runner. */
  async function newLeader(run: () => Promise<void>) {
    const job = importsRunnerJob(t.node.runtime);
    await job.start(10);
    try {
      await run();
    } finally {
      await job.stop();
    }
  }

  it('is cleaned and run again from the start by the next leader', async () => {
    const { site, id } = await interrupted('restart.example', 0);
    await newLeader(async () => {
      const result = await until(site, id, ['completed', 'failed']);
      expect([result.state, result.manifest.rows_accepted]).toEqual(['completed', 5]);
    });
    expect(await rowsOf(id)).toBe(8);
    expect(await pages(site, '2024-03-01', '2024-03-02')).toEqual([
      ['/', 2],
      ['/blog/a', 1],
      ['/pricing', 1],
    ]);
  }, 60_000);

  it('leaves the staged bytes of an import unfinished for a week to the sweep, which fails it', async () => {
    const site = await newSite('stale.example');
    const bytes = Buffer.from(GOATCOUNTER);
    const id = (await create(site, 'goatcounter', [['stale.csv', bytes]])).body.id as string;
    await put(site, id, 0, 0, bytes);
    await t.node.runtime.metadata().query("UPDATE imports SET created_at = now() - interval '8 days' WHERE id = $1", [id]);
    await newLeader(async () => {
      const result = await until(site, id, ['failed']);
      expect([result.error, result.files[0].received]).toEqual([{ message: 'the uploaded files were kept 7 days without the import being run, and were deleted', file: null, line: null }, 0]);
    });
    expect((await t.node.runtime.metadata().query('SELECT 1 FROM import_chunks WHERE import_id = $1', [id])).rowCount).toBe(0);
  });

  it('fails, with nothing kept, once its leaders have died three times', async () => {
    const { site, id } = await interrupted('thrice.example', 2);
    await newLeader(async () => {
      const result = await until(site, id, ['completed', 'failed']);
      expect(result.error).toEqual({ message: 'the node running the import stopped 3 times; nothing of it was kept', file: null, line: null });
    });
    expect(await rowsOf(id)).toBe(0);
  }, 60_000);
});
