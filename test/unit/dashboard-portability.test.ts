// The dashboard's data portability helpers: the export link, the stats query with imported data
// left out, the chart's imported buckets, and the checks of files picked for an import.
import { describe, expect, it } from '@jest/globals';
import { exportHref } from '../../web/src/dashboard/export-link.ts';
import { bands, importedBuckets } from '../../web/src/dashboard/imported.ts';
import { statsQuery } from '../../web/src/dashboard/state.ts';
import { matchPicked, pickProblems } from '../../web/src/imports/pick.ts';

const days = (from: string, count: number) => Array.from({ length: count }, (_, i) => new Date(Date.parse(`${from}T00:00:00Z`) + i * 86_400_000).toISOString());

describe('the export link', () => {
  it('names the table’s route, the range’s dates and the format', () => {
    expect(exportHref('s1', 'pageviews', { from: '2026-01-01', to: '2026-01-31' }, 'xlsx')).toBe('/api/sites/s1/hits/export?from=2026-01-01&to=2026-01-31&format=xlsx');
    expect(exportHref('s1', 'ai-fetches', { from: '2026-01-01', to: '2026-01-01' }, 'csv')).toBe('/api/sites/s1/ai-fetch/export?from=2026-01-01&to=2026-01-01&format=csv');
  });
});

describe('the stats query', () => {
  const range = { from: '2026-01-01', to: '2026-01-31' };
  it('says nothing of imported data while it is shown (the server’s default), and with_imported=false when it is left out', () => {
    expect(statsQuery({ range, filters: [], withImported: true })).toEqual({ from: '2026-01-01', to: '2026-01-31', filter: [] });
    expect(statsQuery({ range, filters: [], withImported: false })).toEqual({ from: '2026-01-01', to: '2026-01-31', filter: [], with_imported: 'false' });
  });
});

describe('imported buckets of the chart', () => {
  it('marks the days inside the ranges, both ends included', () => {
    const buckets = days('2026-03-01', 7);
    expect(importedBuckets(buckets, 'day', 'UTC', [{ from: '2026-03-02', to: '2026-03-03' }, { from: '2026-03-06', to: '2026-03-06' }])).toEqual([false, true, true, false, false, true, false]);
    expect(importedBuckets(buckets, 'day', 'UTC', [])).toEqual([false, false, false, false, false, false, false]);
  });

  it('reads a bucket’s day on the site’s clock', () => {
    // Midnight in Tokyo is 15:00 UTC the day before.
    const buckets = ['2026-03-01T15:00:00.000Z', '2026-03-02T15:00:00.000Z'];
    expect(importedBuckets(buckets, 'day', 'Asia/Tokyo', [{ from: '2026-03-02', to: '2026-03-02' }])).toEqual([true, false]);
  });

  it('marks an hour of an imported day, and a week or month holding any imported day (the last bucket to its own end)', () => {
    const hours = ['2026-03-01T22:00:00.000Z', '2026-03-01T23:00:00.000Z', '2026-03-02T00:00:00.000Z'];
    expect(importedBuckets(hours, 'hour', 'UTC', [{ from: '2026-03-02', to: '2026-03-02' }])).toEqual([false, false, true]);
    const weeks = ['2026-03-02T00:00:00.000Z', '2026-03-09T00:00:00.000Z'];
    expect(importedBuckets(weeks, 'week', 'UTC', [{ from: '2026-03-08', to: '2026-03-08' }])).toEqual([true, false]);
    expect(importedBuckets(weeks, 'week', 'UTC', [{ from: '2026-03-15', to: '2026-03-20' }])).toEqual([false, true]);
    const months = ['2026-01-01T00:00:00.000Z', '2026-02-01T00:00:00.000Z'];
    expect(importedBuckets(months, 'month', 'UTC', [{ from: '2026-02-28', to: '2026-02-28' }])).toEqual([false, true]);
    expect(importedBuckets(months, 'month', 'UTC', [{ from: '2026-03-01', to: '2026-03-05' }])).toEqual([false, false]);
  });

  it('groups neighbouring marked buckets into bands', () => {
    expect(bands([false, true, true, false, true, false, true, true, true])).toEqual([
      [1, 2],
      [4, 4],
      [6, 8],
    ]);
    expect(bands([])).toEqual([]);
  });
});

describe('files picked for an import', () => {
  const accepts = { extensions: ['.csv', '.zip'], max_files: 2, max_file_bytes: 1024 * 1024 };

  it('takes files of the accepted endings, of any case, within the count and size', () => {
    expect(pickProblems([{ name: 'Export.CSV', size: 10 }, { name: 'b.zip', size: 1024 * 1024 }], accepts)).toEqual([]);
  });

  it('says what is wrong: no file, too many, another ending, too large', () => {
    expect(pickProblems([], accepts)).toEqual(['Choose at least one file.']);
    expect(
      pickProblems(
        [
          { name: 'a.csv', size: 1 },
          { name: 'notes.txt', size: 1 },
          { name: 'big.csv', size: 2 * 1024 * 1024 },
        ],
        accepts,
      ),
    ).toEqual([
      'Choose at most 2 files; 3 are chosen.',
      'notes.txt is not one of the accepted files (.csv, .zip).',
      'big.csv is 2.0 MiB, more than the 1.0 MiB a file may have.',
    ]);
  });

  it('finds an import’s files again among newly picked ones by name and size, in the import’s order, or names the missing', () => {
    const wanted = [
      { name: 'a.csv', size: 5 },
      { name: 'b.csv', size: 7 },
    ];
    const b = { name: 'b.csv', size: 7 };
    const a = { name: 'a.csv', size: 5 };
    expect(matchPicked(wanted, [b, a, { name: 'c.csv', size: 1 }])).toEqual({ files: [a, b] });
    expect(matchPicked(wanted, [b, { name: 'a.csv', size: 6 }])).toEqual({ missing: ['a.csv'] });
  });
});
