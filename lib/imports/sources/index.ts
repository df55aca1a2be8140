// The import sources this instance offers, by id: GET /api/sites/{id}/importers lists them and an
// import names one.
import type { ImportSource, ImportSourceId } from '../source.ts';
import { goatcounter } from './goatcounter.ts';
import { plausibleSource } from './plausible.ts';
import { plumbSource } from './plumb.ts';
import { umami } from './umami.ts';

export const IMPORT_SOURCES: readonly ImportSource[] = [plausibleSource, goatcounter, umami, plumbSource];

const BY_ID = new Map<string, ImportSource>(IMPORT_SOURCES.map((source) => [source.id, source]));

export const importSource = (id: ImportSourceId | string): ImportSource | undefined => BY_ID.get(id);
