// Daily salts for cookieless visitor ids. One random salt per UTC day, shared by all nodes through
// the metadata store (first writer wins), kept two days and then deleted, so yesterday's visitors
// cannot be re-identified once their day has passed.
import { randomBytes } from 'node:crypto';
import type { Eventually } from '../eventually.ts';
import type { MetadataQueryable } from '../stores/metadata/index.ts';

export interface SaltRing {
  /** The salt of the UTC day of `at`: at hand once it has been loaded. */
  forTime(at: Date): Eventually<Uint8Array>;
  /** Deletes salts older than yesterday; run by the leader. Returns how many were deleted. */
  prune(now?: Date): Promise<number>;
}

/** The last day asked for: nearly every hit falls on the same day as the one before it. */
let lastDay = { number: Number.NaN, text: '' };

export function utcDay(at: Date): string {
  const number = Math.floor(at.getTime() / 86_400_000);
  if (number !== lastDay.number) lastDay = { number, text: at.toISOString().slice(0, 10) };
  return lastDay.text;
}

export function createSaltRing(db: () => MetadataQueryable): SaltRing {
  /** Each day's salt: the load's promise until it settles, then the bytes (what nearly every hit asks for). */
  const salts = new Map<string, Eventually<Uint8Array>>();

  const load = async (day: string): Promise<Uint8Array> => {
    await db().query('INSERT INTO visitor_salts (day, salt) VALUES ($1, $2) ON CONFLICT (day) DO NOTHING', [day, randomBytes(32)]);
    const { rows } = await db().query<{ salt: Uint8Array }>('SELECT salt FROM visitor_salts WHERE day = $1', [day]);
    return new Uint8Array(rows[0].salt);
  };

  return {
    forTime(at) {
      const day = utcDay(at);
      const known = salts.get(day);
      if (known !== undefined) return known;
      const loading = load(day);
      loading.then(
        (bytes) => {
          // The bytes replace the promise, unless the day was pruned meanwhile.
          if (salts.get(day) === loading) salts.set(day, bytes);
        },
        () => {
          // A failed load must not stick: the next request tries again.
          if (salts.get(day) === loading) salts.delete(day);
        },
      );
      salts.set(day, loading);
      const oldest = utcDay(new Date(at.getTime() - 2 * 86_400_000));
      for (const kept of salts.keys()) if (kept < oldest) salts.delete(kept);
      return loading;
    },
    async prune(now = new Date()) {
      const yesterday = utcDay(new Date(now.getTime() - 86_400_000));
      const { rowCount } = await db().query('DELETE FROM visitor_salts WHERE day < $1', [yesterday]);
      for (const kept of salts.keys()) if (kept < yesterday) salts.delete(kept);
      return rowCount;
    },
  };
}
