// The analytics store on embedded chDB: the shared contract, then what only chDB has to do —
// run reads side by side on connections of its own, keep data across a restart on the same dir,
// and own the process's one data directory.
import { afterAll, describe, expect, it } from '@jest/globals';
import { closeSync, mkdtempSync, openSync, readSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { loaderOnlyRanges } from '../../lib/loader-pages.ts';
import { openAnalyticsStore } from '../../lib/stores/analytics/index.ts';
import { silentLog } from '../../lib/log.ts';
import { analyticsStoreContract } from '../support/analytics-contract.ts';
import { ANALYTICS_MIGRATIONS } from '../support/migration-files.ts';

const dirs: string[] = [];
const tempDir = (name: string) => {
  const dir = mkdtempSync(join(tmpdir(), `plumb-analytics-${name}-`));
  dirs.push(dir);
  return dir;
};
const dataDir = tempDir('chdb');

/** How much of libchdb's relocation table this process maps, and how much of it is resident (/proc/self/pagemap's present bit). */
function relocationTableResidency(): { bytes: number; residentBytes: number } {
  const pagemap = openSync('/proc/self/pagemap', 'r');
  let bytes = 0;
  let residentBytes = 0;
  try {
    for (const range of loaderOnlyRanges('libchdb.so')) {
      const pages = range.length / 4096;
      const entries = Buffer.alloc(pages * 8);
      readSync(pagemap, entries, 0, entries.length, Number((range.start / 4096n) * 8n));
      for (let page = 0; page < pages; page++) if (entries.readBigUInt64LE(page * 8) >> 63n === 1n) residentBytes += 4096;
      bytes += range.length;
    }
  } finally {
    closeSync(pagemap);
  }
  return { bytes, residentBytes };
}

// Runs after every describe block's own afterAll, when all stores are closed.
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

analyticsStoreContract('chDB', () => openAnalyticsStore({ dataDir, log: silentLog }));

describe('chDB analytics store', () => {
  const team = 'c0ffee00-1234-4abc-8def-000000000001';
  const site = '11111111-2222-4333-8444-555555555555';

  it('keeps its data in <dataDir>/analytics and reports kind chdb', async () => {
    const store = await openAnalyticsStore({ dataDir, log: silentLog });
    try {
      expect(store.kind).toBe('chdb');
      const [row] = await store.query<{ path: string }>("SELECT data_path AS path FROM system.databases WHERE name = 'default'");
      expect(row.path.startsWith(join(dataDir, 'analytics'))).toBe(true);
    } finally {
      await store.close();
    }
  });

  it('loads and cleans up table parts with one thread per core, not the engine’s pools of up to 128', async () => {
    const store = await openAnalyticsStore({ dataDir, log: silentLog });
    try {
      const names = ['max_active_parts_loading_thread_pool_size', 'max_outdated_parts_loading_thread_pool_size', 'max_parts_cleaning_thread_pool_size'];
      const pools = await store.query<{ name: string; value: string }>('SELECT name, value FROM system.server_settings WHERE name IN {names:Array(String)} ORDER BY name', { names });
      expect(pools).toEqual(names.map((name) => ({ name, value: String(availableParallelism()) })));
    } finally {
      await store.close();
    }
  });

  it('gives the engine’s freed memory back on request, and goes on answering', async () => {
    const store = await openAnalyticsStore({ dataDir, log: silentLog });
    try {
      await store.query('SELECT count() AS n FROM numbers(1000000) GROUP BY number % 1000');
      await store.releaseMemory();
      expect(await store.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    } finally {
      await store.close();
    }
  });

  it("hands back the pages of libchdb's relocation table once open, and goes on answering", async () => {
    const store = await openAnalyticsStore({ dataDir, log: silentLog });
    try {
      const table = relocationTableResidency();
      expect(table.bytes).toBeGreaterThan(16 * 1024 * 1024);
      // The loader read every page of it; what is left resident is at most a few pages the kernel mapped around a neighbour's.
      expect(table.residentBytes).toBeLessThan(table.bytes / 50);
      expect(await store.query('SELECT count() AS n FROM numbers(1000)')).toEqual([{ n: '1000' }]);
    } finally {
      await store.close();
    }
  });

  it('stores an insert of encoded lines bigger than one conversion slice whole', async () => {
    const store = await openAnalyticsStore({ dataDir, log: silentLog });
    try {
      const db = await store.ensureTenant(team);
      const lines = Array.from({ length: 2501 }, (_, i) => `{"ts":"2024-04-01T00:00:00Z","site_id":"${site}","path":"/slice-${i}"}`);
      await store.insertLines('hits', lines, { database: db });
      const [counted] = await store.query<{ rows: string; first: string; last: string }>(
        "SELECT count() AS rows, min(path) AS first, argMax(path, toUInt32(substring(path, 8))) AS last FROM {db:Identifier}.hits WHERE path LIKE '/slice-%'",
        { db },
      );
      expect(counted).toEqual({ rows: '2501', first: '/slice-0', last: '/slice-2500' });
    } finally {
      await store.close();
    }
  });

  it('keeps rows and applied migrations across a restart on the same dir', async () => {
    const dir = tempDir('restart');
    const first = await openAnalyticsStore({ dataDir: dir, log: silentLog });
    const db = await first.ensureTenant(team);
    await first.insert('hits', [{ ts: new Date('2024-03-05T06:07:08.009Z'), site_id: site, session_id: 1n, path: '/before-restart' }], { database: db });
    const migrationsBefore = await first.query('SELECT version, name, applied_at FROM {db:Identifier}.schema_migrations ORDER BY version', { db });
    await first.close();

    const second = await openAnalyticsStore({ dataDir: dir, log: silentLog });
    try {
      expect(await second.ensureTenant(team)).toBe(db);
      expect(await second.query('SELECT ts, path FROM {db:Identifier}.hits', { db })).toEqual([{ ts: '2024-03-05 06:07:08.009', path: '/before-restart' }]);
      const migrationsAfter = await second.query('SELECT version, name, applied_at FROM {db:Identifier}.schema_migrations ORDER BY version', { db });
      expect(migrationsAfter).toHaveLength(ANALYTICS_MIGRATIONS.length);
      expect(migrationsAfter).toEqual(migrationsBefore);
    } finally {
      await second.close();
    }
  });

  describe('reads side by side', () => {
    it('answers a quick read while a slow one still runs', async () => {
      const store = await openAnalyticsStore({ dataDir, log: silentLog });
      try {
        const finished: string[] = [];
        const slow = store.query('SELECT sleep(1) AS slept').then(() => finished.push('slow'));
        const quick = store.query('SELECT {n:UInt8} AS n', { n: 7 }).then((rows) => finished.push(`quick ${JSON.stringify(rows)}`));
        await Promise.all([slow, quick]);
        expect(finished).toEqual(['quick [{"n":7}]', 'slow']);
      } finally {
        await store.close();
      }
    });

    it('gives a read that runs alone every core, and a read that overlaps another one thread', async () => {
      const store = await openAnalyticsStore({ dataDir, log: silentLog });
      try {
        const threads = async () => Number((await store.query<{ t: string }>("SELECT getSetting('max_threads') AS t"))[0].t);
        const alone = await threads();
        const slow = store.query('SELECT sleep(0.5) AS slept');
        const overlapping = await threads();
        await slow;
        expect({ alone: alone > 1 || availableParallelism() === 1, overlapping }).toEqual({ alone: true, overlapping: availableParallelism() === 1 ? alone : 1 });
      } finally {
        await store.close();
      }
    });

    it('rejects, rather than answers in part, a read cut off by closing the store', async () => {
      const store = await openAnalyticsStore({ dataDir, log: silentLog });
      const slow = store.query('SELECT sleep(1) AS slept');
      await new Promise((resolve) => setTimeout(resolve, 100));
      await store.close();
      await expect(slow).rejects.toThrow('The analytics store was closed during the query');
    });

    it('binds each read its own parameters when many run at once, beside bound commands', async () => {
      const store = await openAnalyticsStore({ dataDir, log: silentLog });
      try {
        const db = await store.ensureTenant(team);
        const reads = Array.from({ length: 120 }, async (_, i) => {
          if (i % 10 === 0) await store.command('SELECT {i:UInt32}, {db:String}', { i, db });
          const m = 2 + (i % 11);
          const [row] = await store.query<{ i: number; tag: string; c: string }>(
            'SELECT {i:UInt32} AS i, {tag:String} AS tag, count() AS c FROM numbers({n:UInt64}) WHERE number % {m:UInt64} = 0',
            { i, tag: `read-${i}`, n: 100_000 + i, m },
          );
          return [row.i, row.tag, Number(row.c)];
        });
        const expected = Array.from({ length: 120 }, (_, i) => [i, `read-${i}`, Math.ceil((100_000 + i) / (2 + (i % 11)))]);
        expect(await Promise.all(reads)).toEqual(expected);
      } finally {
        await store.close();
      }
    });
  });

  it('refuses a second data dir while a store is open, and allows it once that store is closed', async () => {
    const dirA = tempDir('a');
    const dirB = tempDir('b');
    const a = await openAnalyticsStore({ dataDir: dirA, log: silentLog });
    try {
      await expect(openAnalyticsStore({ dataDir: dirB, log: silentLog })).rejects.toThrow(
        `chDB is already open on ${join(dirA, 'analytics')} in this process; it binds one data directory per process, so ${join(dirB, 'analytics')} cannot be opened until that store is closed`,
      );
      // A second store on the same dir shares it.
      const again = await openAnalyticsStore({ dataDir: dirA, log: silentLog });
      expect(await again.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
      await again.close();
      expect(await a.query('SELECT 2 AS two')).toEqual([{ two: 2 }]);
    } finally {
      await a.close();
    }
    const b = await openAnalyticsStore({ dataDir: dirB, log: silentLog });
    expect(await b.query('SELECT 3 AS three')).toEqual([{ three: 3 }]);
    await b.close();
  });
});

describe('chDB analytics store with a memory cap on reads', () => {
  const MiB = 1024 * 1024;

  it('refuses a read that needs more than the cap with MEMORY_LIMIT_EXCEEDED, spills a large aggregation to disk, and goes on answering', async () => {
    const store = await openAnalyticsStore({ dataDir: tempDir('capped'), readMemoryBytes: 256 * MiB, log: silentLog });
    try {
      // Forty million distinct values in one set cannot be split or spilled: well over 256 MiB.
      const refused = await store.query('SELECT uniqExact(number) AS n FROM numbers(40000000)').catch((error: unknown) => error);
      expect(refused).toMatchObject({ name: 'AnalyticsStoreError', code: 241, type: 'MEMORY_LIMIT_EXCEEDED' });
      // A GROUP BY of six million keys (a hash table of hundreds of MiB) goes on on disk past 64 MiB, with the same answer.
      const spilled = async () => Number((await store.query<{ n: string }>("SELECT toString(sum(value)) AS n FROM system.events WHERE event = 'ExternalAggregationWritePart'"))[0]?.n ?? 0);
      const before = await spilled();
      const [grouped] = await store.query<{ groups: string; rows: string }>(
        'SELECT toString(count()) AS groups, toString(sum(c)) AS rows FROM (SELECT number % 6000000 AS k, count() AS c FROM numbers(12000000) GROUP BY k)',
      );
      expect(grouped).toEqual({ groups: '6000000', rows: '12000000' });
      expect(await spilled()).toBeGreaterThan(before);
      // The refusal left nothing behind.
      expect(await store.query<{ one: number }>('SELECT 1 AS one')).toEqual([{ one: 1 }]);
      // The cap is the reads' alone: writes keep the engine's limits.
      await store.command('CREATE TABLE default.capped (n UInt64) ENGINE = MergeTree ORDER BY n');
      await store.command('INSERT INTO default.capped SELECT number FROM numbers(3000000)');
      const [count] = await store.query<{ n: string }>('SELECT toString(count()) AS n FROM default.capped');
      expect(count.n).toBe('3000000');
    } finally {
      await store.close();
    }
  }, 120_000);

  it('streams rows under the cap too', async () => {
    const store = await openAnalyticsStore({ dataDir: tempDir('capped-stream'), readMemoryBytes: 16 * MiB, log: silentLog });
    try {
      const rows = async () => {
        const all = [];
        for await (const row of store.stream('SELECT uniqExact(number) AS n FROM numbers(10000000)')) all.push(row);
        return all;
      };
      await expect(rows()).rejects.toMatchObject({ type: 'MEMORY_LIMIT_EXCEEDED' });
    } finally {
      await store.close();
    }
  }, 60_000);
});

