// The analytics store contract: what every transport (chDB, ClickHouse over HTTP) must do the same
// way. Each suite runs it against a store from `open`; expected values are written out.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { AnalyticsStore } from '../../lib/stores/analytics/index.ts';
import { ANALYTICS_MIGRATIONS } from './migration-files.ts';

const TEAM = '3F0C1F9E-8A51-4C53-9A8F-1D2E3F4A5B6C';
const TEAM_DB = 'tenant_3f0c1f9e8a514c539a8f1d2e3f4a5b6c';
const SITE = '11111111-2222-4333-8444-555555555555';
// Everything that has broken a naive escaper: quotes, backslashes, control characters, SQL,
// a parameter placeholder, and text outside the BMP.
const HOSTILE = `it's "quoted" \\ back\\slash\\n\nnew line\ttab\r\u0000nul ' OR 1=1; DROP TABLE hits; -- {s:String} 💥`;

/** Team ids used once each, so every test starts from a tenant that does not exist yet. */
let teamCounter = 0;
const freshTeam = () => `00000000-0000-4000-8000-${String(++teamCounter).padStart(12, '0')}`;

function hit(index: number, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    ts: new Date(Date.UTC(2024, 2, 5, 6, 7, 8) + index * 1000),
    site_id: SITE,
    session_id: 18446744073709551615n - BigInt(index),
    visitor_id: index,
    hit_id: `aaaaaaaa-bbbb-4ccc-8ddd-${String(index).padStart(12, '0')}`,
    path: `/page/${index}`,
    hostname: 'example.com',
    referrer: 'https://news.ycombinator.com/',
    referrer_source: 'Hacker News',
    utm_source: 'hn',
    country: 'NL',
    browser: 'Firefox',
    os: 'Linux',
    device: 'desktop',
    screen_width: 1920,
    engagement_ms: 4200,
    is_entry: 1,
    source: 'tracker',
    ...overrides,
  };
}

export function analyticsStoreContract(name: string, open: () => Promise<AnalyticsStore>): void {
  describe(`analytics store contract: ${name}`, () => {
    let store: AnalyticsStore;
    beforeAll(async () => {
      store = await open();
    });
    afterAll(async () => {
      await store?.close();
    });

    describe('tenantDatabase', () => {
      it('is tenant_ and the UUID in lower-case hex without dashes', () => {
        expect(store.tenantDatabase(TEAM)).toBe(TEAM_DB);
        expect(store.tenantDatabase('00000000-0000-4000-8000-000000000abc')).toBe('tenant_00000000000040008000000000000abc');
      });

      it('throws on anything that is not a UUID', () => {
        for (const bad of ['', 'team', '3f0c1f9e8a514c539a8f1d2e3f4a5b6c', `${TEAM}; DROP DATABASE x`, '3f0c1f9e-8a51-4c53-9a8f-1d2e3f4a5b6']) {
          expect(() => store.tenantDatabase(bad)).toThrow(/Invalid team id/);
        }
      });
    });

    describe('ensureTenant', () => {
      it('creates the database with the raw, imported and daily tables and records the migrations', async () => {
        const team = freshTeam();
        const db = await store.ensureTenant(team);
        expect(db).toBe(store.tenantDatabase(team));
        const tables = await store.query('SELECT name, engine, sorting_key, partition_key FROM system.tables WHERE database = {db:String} ORDER BY name', { db });
        expect(tables).toEqual([
          { name: 'ai_fetches', engine: 'MergeTree', sorting_key: 'site_id, toDate(ts), assistant_name, ts', partition_key: 'toYYYYMM(ts)' },
          { name: 'daily_breakdowns', engine: 'MergeTree', sorting_key: 'site_id, day, count_id, dimension, value', partition_key: 'toYYYYMM(day)' },
          { name: 'daily_breakdowns_days', engine: 'MergeTree', sorting_key: 'site_id, day', partition_key: 'toYYYYMM(day)' },
          { name: 'events', engine: 'MergeTree', sorting_key: 'site_id, toDate(ts), name, session_id, ts', partition_key: 'toYYYYMM(ts)' },
          { name: 'hits', engine: 'MergeTree', sorting_key: 'site_id, toDate(ts), session_id, ts', partition_key: 'toYYYYMM(ts)' },
          { name: 'imported_browsers', engine: 'MergeTree', sorting_key: 'site_id, date, browser', partition_key: 'toYYYYMM(date)' },
          { name: 'imported_custom_events', engine: 'MergeTree', sorting_key: 'site_id, date, name', partition_key: 'toYYYYMM(date)' },
          { name: 'imported_devices', engine: 'MergeTree', sorting_key: 'site_id, date, device', partition_key: 'toYYYYMM(date)' },
          { name: 'imported_entry_pages', engine: 'MergeTree', sorting_key: 'site_id, date, entry_page', partition_key: 'toYYYYMM(date)' },
          { name: 'imported_exit_pages', engine: 'MergeTree', sorting_key: 'site_id, date, exit_page', partition_key: 'toYYYYMM(date)' },
          { name: 'imported_locations', engine: 'MergeTree', sorting_key: 'site_id, date, country, region', partition_key: 'toYYYYMM(date)' },
          { name: 'imported_operating_systems', engine: 'MergeTree', sorting_key: 'site_id, date, operating_system', partition_key: 'toYYYYMM(date)' },
          { name: 'imported_pages', engine: 'MergeTree', sorting_key: 'site_id, date, hostname, page', partition_key: 'toYYYYMM(date)' },
          { name: 'imported_sources', engine: 'MergeTree', sorting_key: 'site_id, date, source', partition_key: 'toYYYYMM(date)' },
          { name: 'imported_visitors', engine: 'MergeTree', sorting_key: 'site_id, date', partition_key: 'toYYYYMM(date)' },
          { name: 'schema_migrations', engine: 'MergeTree', sorting_key: 'version', partition_key: '' },
          { name: 'visits', engine: 'VersionedCollapsingMergeTree', sorting_key: 'site_id, toDate(start), session_id, version', partition_key: 'toYYYYMM(start)' },
          { name: 'web_vitals', engine: 'MergeTree', sorting_key: 'site_id, toDate(ts), metric, path, ts', partition_key: 'toYYYYMM(ts)' },
        ]);
        const migrations = await store.query('SELECT version, name FROM {db:Identifier}.schema_migrations ORDER BY version', { db });
        expect(migrations).toEqual(ANALYTICS_MIGRATIONS.map((m) => ({ version: m.version, name: m.file.slice(0, -4) })));
      });

      it('gives the columns their declared types', async () => {
        const db = await store.ensureTenant(freshTeam());
        const columns = await store.query<{ table: string; name: string; type: string }>(
          `SELECT table, name, type FROM system.columns WHERE database = {db:String}
           AND (table, name) IN (('hits','ts'), ('hits','session_id'), ('hits','country'), ('hits','screen_width'), ('events','props'), ('events','revenue'), ('web_vitals','value'), ('ai_fetches','bytes'))
           ORDER BY table, name`,
          { db },
        );
        expect(columns).toEqual([
          { table: 'ai_fetches', name: 'bytes', type: 'UInt64' },
          { table: 'events', name: 'props', type: 'Map(String, String)' },
          { table: 'events', name: 'revenue', type: 'Nullable(Decimal(18, 4))' },
          { table: 'hits', name: 'country', type: 'LowCardinality(String)' },
          { table: 'hits', name: 'screen_width', type: 'UInt16' },
          { table: 'hits', name: 'session_id', type: 'UInt64' },
          { table: 'hits', name: 'ts', type: "DateTime64(3, 'UTC')" },
          { table: 'web_vitals', name: 'value', type: 'Float64' },
        ]);
      });

      it('is idempotent: a second call applies nothing again', async () => {
        const team = freshTeam();
        const db = await store.ensureTenant(team);
        const before = await store.query('SELECT version, applied_at FROM {db:Identifier}.schema_migrations ORDER BY version', { db });
        expect(before).toHaveLength(ANALYTICS_MIGRATIONS.length);
        expect(await store.ensureTenant(team)).toBe(db);
        expect(await store.query('SELECT version, applied_at FROM {db:Identifier}.schema_migrations ORDER BY version', { db })).toEqual(before);
      });

      it('is safe to call concurrently for the same team', async () => {
        const team = freshTeam();
        const names = await Promise.all([1, 2, 3, 4, 5].map(() => store.ensureTenant(team)));
        expect(new Set(names)).toEqual(new Set([store.tenantDatabase(team)]));
        const [count] = await store.query('SELECT count() AS n FROM {db:Identifier}.schema_migrations', { db: names[0] });
        expect(count).toEqual({ n: String(ANALYTICS_MIGRATIONS.length) });
      });

      it('rejects a team id that is not a UUID', async () => {
        await expect(store.ensureTenant('not-a-team')).rejects.toThrow(/Invalid team id/);
      });

      it('refuses a tenant written by a newer Plumb, naming the version, and leaves it untouched', async () => {
        const team = freshTeam();
        const db = await store.ensureTenant(team);
        await store.insert('schema_migrations', [{ version: 9999, name: '9999_from_the_future', applied_at: new Date() }], { database: db });
        const latest = ANALYTICS_MIGRATIONS[ANALYTICS_MIGRATIONS.length - 1].version;
        await expect(store.ensureTenant(team)).rejects.toThrow(
          `tenant database ${db} is at schema version 9999 but this Plumb only knows migrations up to ${latest}: a newer Plumb wrote it`,
        );
        const [count] = await store.query('SELECT count() AS n FROM {db:Identifier}.schema_migrations', { db });
        expect(count).toEqual({ n: String(ANALYTICS_MIGRATIONS.length + 1) });
      });
    });

    describe('query parameters', () => {
      it('bind every type the analytics queries use, hostile text verbatim', async () => {
        const rows = await store.query(
          `SELECT {s:String} AS s, {u:UUID} AS u, {t:DateTime64(3)} AS t, {big:UInt64} AS big, {small:UInt64} AS small,
                  {m:Map(String, String)} AS m, {a:Array(String)} AS a, {times:Array(DateTime64(3))} AS times, {flag:UInt8} AS flag,
                  {missing:Nullable(String)} AS missing, {f:Float64} AS f`,
          {
            s: HOSTILE,
            u: TEAM,
            t: new Date('2024-03-05T06:07:08.009Z'),
            big: 18446744073709551615n,
            small: 42,
            m: { [HOSTILE]: HOSTILE, plan: 'pro' },
            a: [HOSTILE, '', 'x'],
            times: [new Date('2024-01-01T00:00:00.000Z'), new Date('2024-12-31T23:59:59.999Z')],
            flag: true,
            missing: null,
            f: 0.25,
          },
        );
        expect(rows).toEqual([
          {
            s: HOSTILE,
            u: '3f0c1f9e-8a51-4c53-9a8f-1d2e3f4a5b6c',
            t: '2024-03-05 06:07:08.009',
            big: '18446744073709551615',
            small: '42',
            m: { [HOSTILE]: HOSTILE, plan: 'pro' },
            a: [HOSTILE, '', 'x'],
            times: ['2024-01-01 00:00:00.000', '2024-12-31 23:59:59.999'],
            flag: 1,
            missing: null,
            f: 0.25,
          },
        ]);
      });

      it('bind database and table names as Identifier', async () => {
        const db = await store.ensureTenant(freshTeam());
        expect(await store.query('SELECT count() AS n FROM {db:Identifier}.{table:Identifier}', { db, table: 'hits' })).toEqual([{ n: '0' }]);
      });

      it('refuse values that cannot be bound exactly', async () => {
        await expect(store.query('SELECT {n:UInt64} AS n', { n: 2 ** 60 })).rejects.toThrow(/beyond 2\^53/);
        await expect(store.query('SELECT {n:Float64} AS n', { n: Number.NaN })).rejects.toThrow(/cannot be bound/);
      });
    });

    describe('insert', () => {
      it('stores rows that read back with their values', async () => {
        const db = await store.ensureTenant(freshTeam());
        await store.insert('hits', [hit(1, { path: HOSTILE }), hit(2)], { database: db });
        await store.insert(
          'events',
          [
            { ts: new Date('2024-03-05T06:07:08.009Z'), site_id: SITE, session_id: 7n, event_id: TEAM, name: 'signup', props: new Map([['plan', 'pro'], ['quote', HOSTILE]]), revenue: 19.99, source: 'server' },
            { ts: '2024-03-05T06:07:09.000Z', site_id: SITE, session_id: '8', event_id: TEAM, name: 'outbound', props: {}, revenue: null },
          ],
          { database: db },
        );
        expect(await store.query('SELECT ts, session_id, visitor_id, path, country, screen_width, is_entry FROM {db:Identifier}.hits ORDER BY ts', { db })).toEqual([
          { ts: '2024-03-05 06:07:09.000', session_id: '18446744073709551614', visitor_id: '1', path: HOSTILE, country: 'NL', screen_width: 1920, is_entry: 1 },
          { ts: '2024-03-05 06:07:10.000', session_id: '18446744073709551613', visitor_id: '2', path: '/page/2', country: 'NL', screen_width: 1920, is_entry: 1 },
        ]);
        expect(await store.query('SELECT ts, name, props, revenue, source FROM {db:Identifier}.events WHERE site_id = {site:UUID} ORDER BY ts', { db, site: SITE })).toEqual([
          { ts: '2024-03-05 06:07:08.009', name: 'signup', props: { plan: 'pro', quote: HOSTILE }, revenue: 19.99, source: 'server' },
          { ts: '2024-03-05 06:07:09.000', name: 'outbound', props: {}, revenue: null, source: '' },
        ]);
      });

      it('stores rows sent as values in the order of named columns (JSONCompactEachRow), the rest at their defaults', async () => {
        const db = await store.ensureTenant(freshTeam());
        const columns = ['path', 'ts', 'site_id', 'session_id', 'screen_width'];
        await store.insert('hits', [{ ts: new Date('2024-03-05T06:07:08.009Z'), site_id: SITE, session_id: 7n, path: HOSTILE, screen_width: 390 }, { ts: '2024-03-05T06:07:09.000Z', site_id: SITE, session_id: '8', path: '/b' }], { database: db, columns });
        await store.insertLines('hits', ['["/c","2024-03-05 06:07:10.000",' + JSON.stringify(SITE) + ',"9",1440]'], { database: db, columns, dedupToken: 'compact-1' });
        await store.insertLines('hits', ['["/c","2024-03-05 06:07:10.000",' + JSON.stringify(SITE) + ',"9",1440]'], { database: db, columns, dedupToken: 'compact-1' });
        expect(await store.query('SELECT ts, session_id, path, screen_width, country FROM {db:Identifier}.hits ORDER BY ts', { db })).toEqual([
          { ts: '2024-03-05 06:07:08.009', session_id: '7', path: HOSTILE, screen_width: 390, country: '' },
          { ts: '2024-03-05 06:07:09.000', session_id: '8', path: '/b', screen_width: 0, country: '' },
          { ts: '2024-03-05 06:07:10.000', session_id: '9', path: '/c', screen_width: 1440, country: '' },
        ]);
        await expect(store.insertLines('hits', ['["/d"]'], { database: db, columns: ['path; DROP TABLE hits'] })).rejects.toThrow(/Invalid column name/);
      });

      it('stores every line of bodies larger than the last one, in multi-byte text, and of inserts made at the same time', async () => {
        const db = await store.ensureTenant(freshTeam());
        const columns = ['path', 'ts', 'site_id', 'session_id'];
        const lines = (prefix: string, count: number) =>
          Array.from({ length: count }, (_, i) => JSON.stringify([`/${prefix}/${i}/${'ü€😀'.repeat(i % 40)}`, '2024-03-05 06:07:10.000', SITE, String(i)]));
        // Small, then large (past any buffer the first one left), then three at once.
        await store.insertLines('hits', lines('small', 3), { database: db, columns });
        await store.insertLines('hits', lines('large', 3000), { database: db, columns });
        await Promise.all(['a', 'b', 'c'].map((prefix) => store.insertLines('hits', lines(prefix, 1500), { database: db, columns })));
        const stored = await store.query<{ path: string }>('SELECT path FROM {db:Identifier}.hits', { db });
        const expected = ['small', 'large', 'a', 'b', 'c'].flatMap((prefix) => lines(prefix, prefix === 'small' ? 3 : prefix === 'large' ? 3000 : 1500).map((line) => JSON.parse(line)[0]));
        expect(stored.map((row) => row.path).sort()).toEqual(expected.sort());
      });

      it('stores a batch once when the same dedup token is sent twice', async () => {
        const db = await store.ensureTenant(freshTeam());
        await store.insert('hits', [hit(1), hit(2)], { database: db, dedupToken: 'journal-batch-1' });
        await store.insert('hits', [hit(1), hit(2)], { database: db, dedupToken: 'journal-batch-1' });
        expect(await store.query('SELECT count() AS n FROM {db:Identifier}.hits', { db })).toEqual([{ n: '2' }]);
      });

      it('stores a batch twice under different tokens, and twice without a token', async () => {
        const db = await store.ensureTenant(freshTeam());
        await store.insert('hits', [hit(1)], { database: db, dedupToken: 'journal-batch-1' });
        await store.insert('hits', [hit(1)], { database: db, dedupToken: 'journal-batch-2' });
        await store.insert('events', [{ ts: new Date(0), site_id: SITE, name: 'x' }], { database: db });
        await store.insert('events', [{ ts: new Date(0), site_id: SITE, name: 'x' }], { database: db });
        expect(await store.query('SELECT count() AS n FROM {db:Identifier}.hits', { db })).toEqual([{ n: '2' }]);
        expect(await store.query('SELECT count() AS n FROM {db:Identifier}.events', { db })).toEqual([{ n: '2' }]);
      });

      it('rejects table and database names that are not plain identifiers', async () => {
        await expect(store.insert('hits; DROP TABLE hits', [hit(1)])).rejects.toThrow(/Invalid table name/);
        await expect(store.insert('Hits', [hit(1)])).rejects.toThrow(/Invalid table name/);
        await expect(store.insert('hits', [hit(1)], { database: 'tenant_x.hits' })).rejects.toThrow(/Invalid database name/);
        await expect(store.insert('hits', [hit(1)], { database: '' })).rejects.toThrow(/Invalid database name/);
      });

      it('does nothing for an empty batch', async () => {
        await expect(store.insert('no_such_table', [])).resolves.toBeUndefined();
      });
    });

    describe('stream', () => {
      it('yields every row of a 20,000-row result in order', async () => {
        const db = await store.ensureTenant(freshTeam());
        const rows = Array.from({ length: 20_000 }, (_, i) => hit(i));
        await store.insert('hits', rows, { database: db });
        let count = 0;
        let previous = '';
        let first: unknown;
        for await (const row of store.stream<{ ts: string; path: string }>('SELECT ts, path FROM {db:Identifier}.hits WHERE site_id = {site:UUID} ORDER BY ts', { db, site: SITE })) {
          if (count === 0) first = row;
          expect(row.ts > previous).toBe(true);
          previous = row.ts;
          count++;
        }
        expect(count).toBe(20_000);
        expect(first).toEqual({ ts: '2024-03-05 06:07:08.000', path: '/page/0' });
        expect(previous).toBe('2024-03-05 11:40:27.000');
      });

      it('hands over rows as they are produced: a billion-row result can be read in part', async () => {
        const seen: string[] = [];
        for await (const row of store.stream<{ number: string }>('SELECT number FROM system.numbers LIMIT {n:UInt64}', { n: 1_000_000_000 })) {
          seen.push(row.number);
          if (seen.length === 3) break;
        }
        expect(seen).toEqual(['0', '1', '2']);
        // The store is still usable after the early exit.
        expect(await store.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
      });

      it('rejects, rather than ends early, when the store is closed mid-stream', async () => {
        const other = await open();
        const seen: string[] = [];
        const iterate = async () => {
          for await (const row of other.stream<{ number: string }>('SELECT number FROM system.numbers LIMIT 1000000000')) {
            seen.push(row.number);
            if (seen.length === 1) await other.close();
          }
        };
        await expect(iterate()).rejects.toThrow(/closed/);
        expect(seen[0]).toBe('0');
      });

      it('rejects the iteration with the ClickHouse message on an error', async () => {
        const iterate = async () => {
          for await (const _row of store.stream('SELECT no_such_column FROM system.one')) {
            // unreachable
          }
        };
        await expect(iterate()).rejects.toMatchObject({ name: 'AnalyticsStoreError', code: 47, type: 'UNKNOWN_IDENTIFIER' });
      });
    });

    describe('streamBytes', () => {
      const text = async (chunks: AsyncIterable<Uint8Array>) => {
        const parts: Uint8Array[] = [];
        for await (const chunk of chunks) parts.push(chunk);
        return Buffer.concat(parts).toString('utf8');
      };

      it('passes on CSV of a result spanning many blocks as one text, without a header', async () => {
        const csv = await text(store.streamBytes('SELECT number, {s:String} AS s FROM numbers({n:UInt64})', { s: 'a "b",\nc', n: 20_000 }, 'CSV'));
        const lines = csv.split('"\n');
        expect(lines[0]).toBe('0,"a ""b"",\nc');
        expect(lines[19_999]).toBe('19999,"a ""b"",\nc');
        expect(lines.length).toBe(20_001);
      });

      it('passes on JSONEachRow as one object a line', async () => {
        const ndjson = await text(store.streamBytes('SELECT number, toUInt64(number) * 1000000000000 AS big FROM numbers(20000)', {}, 'JSONEachRow'));
        const rows = ndjson.trimEnd().split('\n').map((line) => JSON.parse(line));
        expect(rows.length).toBe(20_000);
        expect(rows[19_999]).toEqual({ number: '19999', big: '19999000000000000' });
      });

      it('stops the query when the reader breaks off', async () => {
        let bytes = 0;
        for await (const chunk of store.streamBytes('SELECT number FROM system.numbers LIMIT 1000000000', {}, 'CSV')) {
          bytes += chunk.length;
          break;
        }
        expect(bytes).toBeGreaterThan(0);
        expect(await store.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
      });

      it('rejects the iteration with the ClickHouse message on an error', async () => {
        await expect(text(store.streamBytes('SELECT no_such_column FROM system.one', {}, 'CSV'))).rejects.toMatchObject({ name: 'AnalyticsStoreError', code: 47 });
      });
    });

    describe('command', () => {
      it('runs DDL and statements without a result', async () => {
        const db = await store.ensureTenant(freshTeam());
        await store.command('CREATE TABLE IF NOT EXISTS {db:Identifier}.scratch (id UInt32, note String) ENGINE = MergeTree ORDER BY id', { db });
        await store.command('INSERT INTO {db:Identifier}.scratch VALUES (1, {note:String}), (2, {note:String})', { db, note: HOSTILE });
        await store.command('DELETE FROM {db:Identifier}.scratch WHERE id = {id:UInt32}', { db, id: 1 });
        expect(await store.query('SELECT id, note FROM {db:Identifier}.scratch', { db })).toEqual([{ id: 2, note: HOSTILE }]);
      });
    });

    describe('errors', () => {
      it('reject with the ClickHouse code, type and message', async () => {
        const failure = store.query('SELECT no_such_column FROM system.one');
        await expect(failure).rejects.toMatchObject({ name: 'AnalyticsStoreError', code: 47, type: 'UNKNOWN_IDENTIFIER' });
        await expect(failure).rejects.toThrow(/Unknown expression identifier `no_such_column`/);
        // Only the code: over HTTP the client reads the type out of the message, and a syntax
        // error's message quotes the query.
        await expect(store.command('SELEC 1')).rejects.toMatchObject({ name: 'AnalyticsStoreError', code: 62 });
        await expect(store.insert('no_such_table', [{ a: 1 }], { database: 'no_such_database' })).rejects.toMatchObject({ code: 81, type: 'UNKNOWN_DATABASE' });
        await expect(store.query('SELECT {n:UInt8} AS n')).rejects.toMatchObject({ code: 456, type: 'UNKNOWN_QUERY_PARAMETER' });
      });
    });

    describe('ping and close', () => {
      it('pings an open store', async () => {
        await expect(store.ping()).resolves.toBeUndefined();
      });

      it('closes idempotently; a closed store rejects', async () => {
        const other = await open();
        expect(other.kind).toBe(store.kind);
        await other.close();
        await other.close();
        await expect(other.query('SELECT 1')).rejects.toThrow(/closed/);
        await expect(other.ping()).rejects.toThrow(/closed/);
        // Closing one store leaves the others working.
        expect(await store.query('SELECT 2 AS two')).toEqual([{ two: 2 }]);
      });
    });
  });
}
