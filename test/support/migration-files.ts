// The migrations Plumb ships, read straight from the folders by file name, so store tests expect
// exactly the files on disk without going through the runner they are testing.
import { readdirSync } from 'node:fs';

function shipped(folder: string): { version: number; name: string; file: string }[] {
  return readdirSync(new URL(folder, import.meta.url))
    .filter((file) => file.endsWith('.sql'))
    .sort()
    .map((file) => ({ version: Number(file.slice(0, 4)), name: file.slice(5, -4), file }));
}

export const METADATA_MIGRATIONS = shipped('../../lib/stores/metadata/migrations/');
export const ANALYTICS_MIGRATIONS = shipped('../../lib/stores/analytics/migrations/');
export const LATEST_METADATA_VERSION = METADATA_MIGRATIONS[METADATA_MIGRATIONS.length - 1].version;
