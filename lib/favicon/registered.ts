// Whose icons the public favicon routes fetch for anyone: the sites registered on this instance
// (their domain and further hostnames). Anything else only for a signed-in caller, so strangers
// cannot make the server fetch, and store, icons of domains of their choosing.
import type { MetadataQueryable } from '../stores/metadata/index.ts';

/** Whether a live site answers on this (normalised) domain, as its domain or a further hostname. */
export async function isRegisteredDomain(db: MetadataQueryable, domain: string): Promise<boolean> {
  const { rows } = await db.query<{ found: number }>(
    `SELECT 1 AS found FROM sites WHERE domain = $1 AND deleted_at IS NULL
     UNION ALL
     SELECT 1 FROM site_hostnames h JOIN sites s ON s.id = h.site_id WHERE h.hostname = $1 AND s.deleted_at IS NULL
     LIMIT 1`,
    [domain],
  );
  return rows.length > 0;
}
