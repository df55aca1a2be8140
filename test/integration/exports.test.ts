// Exports of pageviews and AI fetches (GET /api/sites/:id/hits/export, …/ai-fetch/export) on a
// real node: rows sent through the ingest routes come back in every format, each read by a reader
// of its own (a strict CSV parser here, JSON.parse, hyparquet), with the range's edges, filters,
// headers, refusals, and a client that hangs up midway.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parquetMetadata, parquetReadObjects, parquetSchema } from 'hyparquet';
import { slicesOf } from '../../lib/exports/slices.ts';
import { createSite, type Site } from '../../lib/sites/sites.ts';
import type { AnalyticsStore } from '../../lib/stores/analytics/index.ts';
import { stringLiteral } from '../../lib/stores/analytics/transport.ts';
import { type Person, person } from '../support/accounts.ts';
import { waitFor } from '../support/instance.ts';
import { startTestNode, type TestNode } from '../support/node.ts';

const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';
const GPTBOT = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)';
const CLAUDE_USER = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Claude-User/1.0; +Claude-User@anthropic.com)';
const RANGE = 'from=2026-01-10T00:00:00Z&to=2026-01-12T00:00:00Z';

// Pageviews inside the range (its first instant included), one at its end (excluded), one before.
const PAGEVIEWS = [
  { at: '2026-01-10T00:00:00.000Z', path: '/' },
  { at: '2026-01-10T08:15:30.250Z', path: '/pricing' },
  { at: '2026-01-11T12:00:00.000Z', path: '/a,b;c' },
  { at: '2026-01-11T23:59:59.999Z', path: '/docs/getting-started' },
];
const OUTSIDE = [
  { at: '2026-01-12T00:00:00.000Z', path: '/at-the-end' },
  { at: '2026-01-09T23:59:59.999Z', path: '/before' },
];
const FETCHES = [
  { at: '2026-01-10T01:00:00.000Z', path: '/docs/guide', ua: GPTBOT, status_code: 200, bytes: 5120 },
  { at: '2026-01-10T02:00:00.000Z', path: '/files/report.pdf', ua: GPTBOT, status_code: 200, bytes: 90000 },
  { at: '2026-01-11T03:00:00.000Z', path: '/docs/guide', ua: CLAUDE_USER, status_code: 404, bytes: 0 },
];
const HIT_COLUMNS = [
  'ts', 'session_id', 'visitor_id', 'hit_id', 'path', 'hostname', 'referrer', 'referrer_source', 'channel', 'utm_source', 'utm_medium',
  'utm_campaign', 'utm_term', 'utm_content', 'country', 'region', 'browser', 'browser_version', 'os', 'os_version', 'device', 'screen_width', 'is_entry', 'source',
];
const FETCH_COLUMNS = [
  'ts', 'fetch_id', 'path', 'url', 'status_code', 'content_type', 'response_time_ms', 'bytes', 'user_agent', 'assistant_name', 'assistant_family',
  'assistant_category', 'resource_type',
];

let t: TestNode;
let viewer: Person;
let outsider: Person;
let statsToken: string;
let bigSite: Site;

/** RFC 4180, strictly: every field quoted or bare, quotes doubled inside quotes, CRLF or LF between records. */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let at = 0;
  while (at < text.length) {
    let field = '';
    if (text[at] === '"') {
      at++;
      for (;;) {
        const quote = text.indexOf('"', at);
        if (quote === -1) throw new Error('unterminated quoted field');
        field += text.slice(at, quote);
        at = quote + 1;
        if (text[at] !== '"') break;
        field += '"';
        at++;
      }
    } else {
      const end = text.slice(at).search(/[,\r\n]/);
      field = end === -1 ? text.slice(at) : text.slice(at, at + end);
      if (field.includes('"')) throw new Error(`a bare field holds a quote: ${field}`);
      at = end === -1 ? text.length : at + end;
    }
    record.push(field);
    if (text[at] === ',') at++;
    else if (at >= text.length || text[at] === '\n' || text[at] === '\r') {
      at += text.startsWith('\r\n', at) ? 2 : 1;
      records.push(record);
      record = [];
    } else throw new Error(`unexpected ${JSON.stringify(text[at])} after a field at ${at}`);
  }
  return records;
}

const exportUrl = (site: Site, what: 'hits' | 'ai-fetch', query: string) => `${t.url}/api/sites/${site.id}/${what}/export?${query}`;
const asViewer = (url: string) => fetch(url, { headers: { Cookie: viewer.cookie } });

async function post(path: string, body: unknown, token: string) {
  const res = await fetch(`${t.url}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` }, body: JSON.stringify(body) });
  expect(res.status).toBe(202);
}

beforeAll(async () => {
  t = await startTestNode();
  const metadata = t.node.runtime.metadata();
  viewer = await person(t);
  outsider = await person(t);
  statsToken = await t.token(['stats:read'], [{ siteId: t.site.id, role: 'viewer' }]);
  const ingestToken = await t.token(['ingest:write', 'ai-fetch:write'], [
    { siteId: t.site.id, role: 'editor' },
    { siteId: t.otherSite.id, role: 'editor' },
  ]);
  const pageview = (at: string, path: string, domain = 'example.com') => ({ type: 'pageview', url: `https://${domain}${path}`, timestamp: at, visitor_ip: '193.0.6.139', user_agent: FIREFOX });
  await post('/api/ingest/server/batch', { items: [...PAGEVIEWS, ...OUTSIDE].map((p) => pageview(p.at, p.path)) }, ingestToken);
  await post('/api/ingest/server/batch', { items: [pageview('2026-01-10T10:00:00Z', '/other-site', 'other.example')] }, ingestToken);
  await post(`/api/sites/${t.site.id}/ingest/ai-fetch`, { items: FETCHES.map((f) => ({ path: f.path, status_code: f.status_code, bytes: f.bytes, user_agent: f.ua, timestamp: f.at })) }, ingestToken);
  await t.rows('hits', 7);
  await t.rows('ai_fetches', 3);

  // 100,000 pageviews of a site of their own, for the size and the hang-up tests.
  bigSite = await createSite(metadata, { teamId: t.team.id, domain: 'big.example' });
  for (const site of [t.site, bigSite]) await metadata.query('INSERT INTO site_members (site_id, user_id, role) VALUES ($1, $2, $3)', [site.id, viewer.id, 'viewer']);
  await t.node.runtime.analytics().command(
    `INSERT INTO {db:Identifier}.hits (ts, site_id, session_id, visitor_id, hit_id, path, hostname, browser, device, is_entry, source)
     SELECT toDateTime64('2026-02-01 00:00:00', 3, 'UTC') + toIntervalSecond(number), {site:UUID}, number % 5000, number % 3000,
            generateUUIDv4(number), concat('/page/', toString(number % 400)), 'big.example', 'Firefox', 'desktop', 1, 'server'
     FROM numbers(100000)`,
    { db: t.node.runtime.analytics().tenantDatabase(t.team.id), site: bigSite.id },
  );
}, 60_000);

afterAll(() => t?.stop());

describe('GET /api/sites/:id/hits/export', () => {
  it('answers CSV by default: a header of the columns in table order, then the range’s pageviews oldest first', async () => {
    const res = await asViewer(exportUrl(t.site, 'hits', RANGE));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="example.com-pageviews-2026-01-10-to-2026-01-11.csv"');
    const [header, ...rows] = parseCsv(await res.text());
    expect(header).toEqual(HIT_COLUMNS);
    const records = rows.map((row) => Object.fromEntries(header.map((name, i) => [name, row[i]])));
    expect(records.map((r) => [r.ts, r.path])).toEqual(PAGEVIEWS.map((p) => [p.at, p.path]));
    expect(records[1]).toMatchObject({ hostname: 'example.com', browser: 'Firefox', os: 'Linux', country: 'NL', source: 'server', screen_width: '0' });
    // The same rows as the store holds them.
    const stored = await t.rowsNow<Record<string, string>>('hits', 'site_id = {site:UUID} AND path = {path:String}', { site: t.site.id, path: '/pricing' });
    expect(records[1].hit_id).toBe(stored[0].hit_id);
    expect(records[1].session_id).toBe(String(stored[0].session_id));
  });

  it('answers NDJSON, one row a line, 64-bit ids as strings', async () => {
    const res = await asViewer(exportUrl(t.site, 'hits', `${RANGE}&format=ndjson`));
    expect(res.headers.get('content-type')).toBe('application/x-ndjson');
    expect(res.headers.get('content-disposition')).toContain('example.com-pageviews-2026-01-10-to-2026-01-11.ndjson');
    const text = await res.text();
    const rows = text.trimEnd().split('\n').map((line) => JSON.parse(line));
    expect(rows.map((r) => [r.ts, r.path])).toEqual(PAGEVIEWS.map((p) => [p.at, p.path]));
    expect(Object.keys(rows[0])).toEqual(HIT_COLUMNS);
    expect(typeof rows[0].session_id).toBe('string');
  });

  it('answers JSON as one array, and an empty range as []', async () => {
    const res = await asViewer(exportUrl(t.site, 'hits', `${RANGE}&format=json`));
    expect(res.headers.get('content-type')).toBe('application/json');
    const rows = JSON.parse(await res.text());
    expect(rows.map((r: { path: string }) => r.path)).toEqual(PAGEVIEWS.map((p) => p.path));
    const empty = await asViewer(exportUrl(t.site, 'hits', 'from=2025-01-01&to=2025-01-02&format=json'));
    expect(JSON.parse(await empty.text())).toEqual([]);
  });

  it('answers Parquet with timestamps as UTC instants', async () => {
    const res = await asViewer(exportUrl(t.site, 'hits', `${RANGE}&format=parquet`));
    expect(res.headers.get('content-type')).toBe('application/vnd.apache.parquet');
    expect(res.headers.get('content-disposition')).toContain('.parquet"');
    const rows = await parquetReadObjects({ file: await res.arrayBuffer() });
    expect(rows.map((r) => [(r.ts as Date).toISOString(), r.path])).toEqual(PAGEVIEWS.map((p) => [p.at, p.path]));
    expect(Object.keys(rows[0])).toEqual(HIT_COLUMNS);
    expect(rows[0]).toMatchObject({ hostname: 'example.com', browser: 'Firefox', is_entry: 1 });
  });

  it('takes whole days in the site’s time zone, the last one included', async () => {
    const res = await asViewer(exportUrl(t.site, 'hits', 'from=2026-01-11&to=2026-01-12&format=ndjson'));
    const paths = (await res.text()).trimEnd().split('\n').map((line) => JSON.parse(line).path);
    expect(paths).toEqual(['/a,b;c', '/docs/getting-started', '/at-the-end']);
    expect(res.headers.get('content-disposition')).toContain('example.com-pageviews-2026-01-11-to-2026-01-12.ndjson');
  });

  it('streams 100,000 rows whole', async () => {
    const res = await asViewer(exportUrl(bigSite, 'hits', 'from=2026-02-01&to=2026-02-03'));
    const lines = (await res.text()).trimEnd().split('\n');
    expect(lines.length).toBe(100_001);
    expect(lines[1].startsWith('"2026-02-01T00:00:00.000Z",')).toBe(true);
    // One row a second, read in slices of hours: every second once, in order.
    const seconds = lines.slice(1).map((line) => Date.parse(line.slice(1, 25)));
    expect(seconds.every((at, i) => at === Date.parse('2026-02-01T00:00:00Z') + i * 1000)).toBe(true);
    const parquet = await asViewer(exportUrl(bigSite, 'hits', 'from=2026-02-01&to=2026-02-03&format=parquet'));
    const rows = await parquetReadObjects({ file: await parquet.arrayBuffer(), columns: ['path'] });
    expect(rows.length).toBe(100_000);
  }, 60_000);

  it('joins the range’s slices into one Parquet file that hyparquet and ClickHouse each read whole, as the store holds it', async () => {
    const store = t.node.runtime.analytics();
    const res = await asViewer(exportUrl(bigSite, 'hits', 'from=2026-02-01&to=2026-02-03&format=parquet'));
    const file = new Uint8Array(await res.arrayBuffer());
    // 100,000 rows at 3,600 an hour, in slices of at most 50,000 rows (13 hours): one row group per slice.
    const metadata = parquetMetadata(file.buffer);
    expect(metadata.row_groups.length).toBe(3);
    expect(Number(metadata.num_rows)).toBe(100_000);
    const rows = await parquetReadObjects({ file: file.buffer });
    const stored = await store.query<{ ts: string; hit_id: string; session_id: string; path: string }>(
      `SELECT toString(ts) AS ts, toString(hit_id) AS hit_id, toString(session_id) AS session_id, path FROM {db:Identifier}.hits WHERE site_id = {site:UUID} ORDER BY ts`,
      { db: store.tenantDatabase(t.team.id), site: bigSite.id },
    );
    expect(rows.map((r) => [(r.ts as Date).toISOString().replace('T', ' ').replace('Z', ''), r.hit_id, String(r.session_id), r.path])).toEqual(stored.map((r) => [r.ts, r.hit_id, r.session_id, r.path]));
    // ClickHouse reads the joined file too (a restore or an import reads Parquet with it).
    const dir = mkdtempSync(join(tmpdir(), 'plumb-test-parquet-'));
    try {
      writeFileSync(join(dir, 'hits.parquet'), file);
      const [read] = await store.query<{ rows: string; paths: string; first: string; last: string }>(
        `SELECT toString(count()) AS rows, toString(uniqExact(path)) AS paths, toString(min(ts)) AS first, toString(max(ts)) AS last FROM file(${stringLiteral(join(dir, 'hits.parquet'))}, 'Parquet')`,
      );
      expect(read).toEqual({ rows: '100000', paths: '400', first: '2026-02-01 00:00:00.000', last: '2026-02-02 03:46:39.000' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('joins slices a ClickHouse server wrote with bloom filters and page indexes, leaving those out', async () => {
    const store = t.node.runtime.analytics();
    const original = store.exportParquet;
    // What a ClickHouse server's defaults write (chDB here is told not to): indexes after the row
    // groups, with offsets of their own; and several row groups a slice.
    store.exportParquet = (sql, params, file) =>
      store.command(`INSERT INTO FUNCTION file(${stringLiteral(file)}, 'Parquet') ${sql} SETTINGS output_format_parquet_write_bloom_filter = 1, output_format_parquet_write_page_index = 1, output_format_parquet_row_group_size = 20000, output_format_parquet_compression_method = 'snappy'`, params);
    try {
      const file = await (await asViewer(exportUrl(bigSite, 'hits', 'from=2026-02-01&to=2026-02-03&format=parquet'))).arrayBuffer();
      const metadata = parquetMetadata(file);
      expect(metadata.row_groups.length).toBeGreaterThan(3);
      const chunks = metadata.row_groups.flatMap((group) => group.columns);
      expect(chunks.filter((chunk) => chunk.offset_index_offset !== undefined || chunk.column_index_offset !== undefined || chunk.meta_data?.bloom_filter_offset !== undefined)).toEqual([]);
      const rows = await parquetReadObjects({ file, columns: ['ts', 'path'] });
      expect(rows.length).toBe(100_000);
      expect(rows.every((row, i) => (row.ts as Date).getTime() === Date.parse('2026-02-01T00:00:00Z') + i * 1000 && row.path === `/page/${i % 400}`)).toBe(true);
    } finally {
      store.exportParquet = original;
    }
  }, 60_000);

  it('writes a range without rows as a Parquet file of the table’s columns and no row', async () => {
    const res = await asViewer(exportUrl(bigSite, 'hits', 'from=2025-02-01&to=2025-02-03&format=parquet'));
    expect(res.status).toBe(200);
    const file = await res.arrayBuffer();
    expect(Number(parquetMetadata(file).num_rows)).toBe(0);
    expect(parquetSchema(parquetMetadata(file)).children.map((column) => column.element.name)).toEqual(HIT_COLUMNS);
  });

  it('reads a day with more rows than a slice holds in slices of whole hours that cover the range', async () => {
    const store = t.node.runtime.analytics();
    const range = { from: new Date('2026-02-01T00:30:00Z'), to: new Date('2026-02-03T00:00:00Z') };
    const query = { sql: '', params: { db: store.tenantDatabase(t.team.id), site: bigSite.id }, table: 'hits', time: 'ts', range };
    const slices = await slicesOf(store, query, 10_000);
    // 86,400 rows on 2026-02-01 alone, far more than one slice: 3,600 an hour, so two whole hours
    // fit in one (7,200 rows) and three do not; the first slice has half an hour more (range starts at 00:30).
    expect(slices.length).toBe(13);
    expect(slices[0]).toEqual({ from: range.from, to: new Date('2026-02-01T03:00:00Z') });
    expect(slices[1]).toEqual({ from: new Date('2026-02-01T03:00:00Z'), to: new Date('2026-02-01T05:00:00Z') });
    expect(slices.at(-1)?.to).toEqual(new Date('2026-02-02T04:00:00Z'));
    for (let i = 1; i < slices.length; i++) expect(slices[i].from).toEqual(slices[i - 1].to);
  });

  it('cuts an hour with more rows than a slice holds into minutes, and such a minute into seconds', async () => {
    const store = t.node.runtime.analytics();
    const range = { from: new Date('2026-02-01T00:30:00Z'), to: new Date('2026-02-01T02:00:00Z') };
    const query = { sql: '', params: { db: store.tenantDatabase(t.team.id), site: bigSite.id }, table: 'hits', time: 'ts', range };
    // One row a second: 3,600 an hour, 60 a minute.
    const byMinutes = await slicesOf(store, query, 1_000);
    expect(byMinutes[0]).toEqual({ from: range.from, to: new Date('2026-02-01T00:46:00Z') });
    expect(byMinutes[1]).toEqual({ from: new Date('2026-02-01T00:46:00Z'), to: new Date('2026-02-01T01:02:00Z') });
    const bySeconds = await slicesOf(store, query, 45);
    expect(bySeconds[0]).toEqual({ from: range.from, to: new Date('2026-02-01T00:30:45Z') });
    expect(bySeconds.length).toBe(120);
    for (const slices of [byMinutes, bySeconds]) {
      expect(slices.at(-1)?.to).toEqual(range.to);
      for (let i = 1; i < slices.length; i++) expect(slices[i].from).toEqual(slices[i - 1].to);
    }
  });

  it('refuses an unknown format, naming the ones it has, and a bad range', async () => {
    const xml = await asViewer(exportUrl(t.site, 'hits', 'format=xml'));
    expect(xml.status).toBe(400);
    expect((await xml.json()).fields).toEqual([expect.objectContaining({ field: 'format', message: 'format must be one of: csv, ndjson, json, parquet, xlsx' })]);
    const backwards = await asViewer(exportUrl(t.site, 'hits', 'from=2026-01-12&to=2026-01-10'));
    expect(backwards.status).toBe(400);
    expect((await backwards.json()).fields).toEqual([expect.objectContaining({ field: 'to', type: 'rangeOrder' })]);
    const tooLong = await asViewer(exportUrl(t.site, 'hits', 'from=2000-01-01&to=2026-01-10'));
    expect((await tooLong.json()).fields).toEqual([expect.objectContaining({ field: 'to', type: 'rangeLength' })]);
    const malformed = await asViewer(exportUrl(t.site, 'hits', 'from=yesterday'));
    expect((await malformed.json()).fields).toEqual([expect.objectContaining({ field: 'from', type: 'dateOrDateTime' })]);
  });

  it('serves a stats:read token; refuses a signed-in stranger and an anonymous caller', async () => {
    expect((await fetch(exportUrl(t.site, 'hits', RANGE), { headers: { Authorization: `Bearer ${statsToken}` } })).status).toBe(200);
    expect((await fetch(exportUrl(t.site, 'hits', RANGE), { headers: { Cookie: outsider.cookie } })).status).toBe(404);
    expect((await fetch(exportUrl(t.site, 'hits', RANGE))).status).toBe(401);
  });
});

describe('GET /api/sites/:id/ai-fetch/export', () => {
  const paths = async (query: string) => {
    const res = await asViewer(exportUrl(t.site, 'ai-fetch', `${RANGE}&format=json&${query}`));
    expect(res.status).toBe(200);
    return JSON.parse(await res.text()).map((r: { path: string; assistant_name: string }) => `${r.assistant_name} ${r.path}`);
  };

  it('answers the range’s fetches as CSV with the table’s columns', async () => {
    const res = await asViewer(exportUrl(t.site, 'ai-fetch', RANGE));
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="example.com-ai-fetches-2026-01-10-to-2026-01-11.csv"');
    const [header, ...rows] = parseCsv(await res.text());
    expect(header).toEqual(FETCH_COLUMNS);
    const records = rows.map((row) => Object.fromEntries(header.map((name, i) => [name, row[i]])));
    expect(records.map((r) => [r.ts, r.path, r.status_code, r.bytes, r.user_agent])).toEqual(FETCHES.map((f) => [f.at, f.path, String(f.status_code), String(f.bytes), f.ua]));
    expect(records[1]).toMatchObject({ assistant_name: 'GPTBot', assistant_family: 'OpenAI', resource_type: 'document' });
  });

  it('keeps only the fetches matching every filter given', async () => {
    expect(await paths('assistant_name=GPTBot')).toEqual(['GPTBot /docs/guide', 'GPTBot /files/report.pdf']);
    expect(await paths('assistant_family=Anthropic')).toEqual(['Claude-User /docs/guide']);
    expect(await paths('resource_type=html')).toEqual(['GPTBot /docs/guide', 'Claude-User /docs/guide']);
    expect(await paths('assistant_family=OpenAI&resource_type=document')).toEqual(['GPTBot /files/report.pdf']);
    expect(await paths('assistant_name=gptbot')).toEqual([]);
  });

  it('answers Parquet and NDJSON with the same rows', async () => {
    const parquet = await parquetReadObjects({ file: await (await asViewer(exportUrl(t.site, 'ai-fetch', `${RANGE}&format=parquet`))).arrayBuffer() });
    expect(parquet.map((r) => [(r.ts as Date).toISOString(), r.path, r.status_code, r.bytes])).toEqual(FETCHES.map((f) => [f.at, f.path, f.status_code, BigInt(f.bytes)]));
    const ndjson = (await (await asViewer(exportUrl(t.site, 'ai-fetch', `${RANGE}&format=ndjson`))).text()).trimEnd().split('\n');
    expect(ndjson.map((line) => JSON.parse(line).fetch_id)).toEqual(parquet.map((r) => r.fetch_id));
  });

  it('refuses an unknown resource type and an empty filter', async () => {
    const res = await asViewer(exportUrl(t.site, 'ai-fetch', 'resource_type=video&assistant_name='));
    expect(res.status).toBe(400);
    expect((await res.json()).fields.map((f: { field: string }) => f.field).sort()).toEqual(['assistant_name', 'resource_type']);
  });
});

describe('a client that hangs up midway', () => {
  /** Opens the export, reads its first bytes, and hangs up. */
  const hangUp = (url: string) =>
    new Promise<void>((resolve, reject) => {
      const req = get(url, { headers: { Cookie: viewer.cookie } }, (res) => {
        if (res.statusCode !== 200) reject(new Error(`answered ${res.statusCode}`));
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      });
      req.on('error', (error) => (req.destroyed ? undefined : reject(error)));
    });

  it('stops the store’s stream of a CSV export', async () => {
    const store: AnalyticsStore = t.node.runtime.analytics();
    const original = store.streamBytes.bind(store);
    let open = 0;
    let chunks = 0;
    store.streamBytes = (sql, params, format) => ({
      async *[Symbol.asyncIterator]() {
        open++;
        try {
          for await (const chunk of original(sql, params, format)) {
            chunks++;
            yield chunk;
          }
        } finally {
          open--;
        }
      },
    });
    try {
      await hangUp(exportUrl(bigSite, 'hits', 'from=2026-02-01&to=2026-02-03'));
      await waitFor(async () => open === 0, 5000, () => 'the store stream is still open');
      // 100,000 rows are 13 blocks; the stream stopped well before them.
      expect(chunks).toBeLessThan(13);
    } finally {
      store.streamBytes = original;
    }
    expect((await asViewer(exportUrl(t.site, 'hits', `${RANGE}&format=ndjson`))).status).toBe(200);
  }, 30_000);

  it('has the engine give back what the read freed, whether the export ran to its end or was cut short', async () => {
    const store: AnalyticsStore = t.node.runtime.analytics();
    const original = store.releaseMemory.bind(store);
    let released = 0;
    store.releaseMemory = async () => {
      released++;
      await original();
    };
    try {
      for (const format of ['csv', 'parquet']) {
        const before = released;
        expect((await (await asViewer(exportUrl(t.site, 'hits', `${RANGE}&format=${format}`))).arrayBuffer()).byteLength).toBeGreaterThan(0);
        await waitFor(async () => released > before, 5000, () => `a whole ${format} export did not release the engine’s memory`);
      }
      const before = released;
      await hangUp(exportUrl(bigSite, 'hits', 'from=2026-02-01&to=2026-02-03'));
      await waitFor(async () => released > before, 5000, () => 'an export cut short did not release the engine’s memory');
    } finally {
      store.releaseMemory = original;
    }
  }, 30_000);

  it('leaves no Parquet file behind', async () => {
    const temporary = () => readdirSync(tmpdir()).filter((name) => name.startsWith('plumb-parquet-'));
    const before = new Set(temporary());
    await hangUp(exportUrl(bigSite, 'hits', 'from=2026-02-01&to=2026-02-03&format=parquet'));
    await waitFor(async () => temporary().every((name) => before.has(name)), 5000, () => `left behind: ${temporary().join(', ')}`);
    const head = await fetch(exportUrl(t.site, 'hits', `${RANGE}&format=parquet`), { method: 'HEAD', headers: { Cookie: viewer.cookie } });
    expect(head.status).toBe(200);
    await waitFor(async () => temporary().every((name) => before.has(name)), 5000, () => `left behind after HEAD: ${temporary().join(', ')}`);
  }, 30_000);
});
