// Daily salts for cookieless visitor ids. One random salt per UTC day, shared by all nodes through
// the metadata store (first writer wins), kept two days and then deleted, so yesterday's visitors
// cannot be re-identified once their day has passed.
import { randomBytes } from 'node:crypto';
import type { MetadataQueryable } from '../stores/metadata/index.ts';

export interface SaltRing {
  /** The salt of the UTC day of `at`. */
  forTime(at: Date): Promise<Uint8Array>;
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
  const cache = new Map<string, Promise<Uint8Array>>();

  const load = async (day: string): Promise<Uint8Array> => {
    await db().query('INSERT INTO visitor_salts (day, salt) VALUES ($1, $2) ON CONFLICT (day) DO NOTHING', [day, randomBytes(32)]);
    const { rows } = await db().query<{ salt: Uint8Array }>('SELECT salt FROM visitor_salts WHERE day = $1', [day]);
    return new Uint8Array(rows[0].salt);
  };

  return {
    forTime(at) {
      const day = utcDay(at);
      let salt = cache.get(day);
      if (!salt) {
        salt = load(day);
        // A failed load must not stick: the next request tries again.
        salt.catch(() => cache.delete(day));
        cache.set(day, salt);
        for (const known of cache.keys()) if (known < utcDay(new Date(at.getTime() - 2 * 86_400_000))) cache.delete(known);
      }
      return salt;
    },
    async prune(now = new Date()) {
      const yesterday = utcDay(new Date(now.getTime() - 86_400_000));
      const { rowCount } = await db().query('DELETE FROM visitor_salts WHERE day < $1', [yesterday]);
      for (const known of cache.keys()) if (known < yesterday) cache.delete(known);
      return rowCount;
    },
  };
}
