// Teams and sites as the collection pipeline needs them: create, and resolve a hostname or id to a
// site with its tenant database, cached briefly so the ingest hot path rarely touches PostgreSQL.
import type { Eventually } from '../eventually.ts';
import { randomUUID } from 'node:crypto';
import { conflict, type FieldError, notFound, validationFailed } from '../errors.ts';
import { tenantDatabase } from '../stores/analytics/index.ts';
import type { MetadataQueryable } from '../stores/metadata/index.ts';
import { DOMAIN_MESSAGE, HOSTNAME_MESSAGE } from './fields.ts';
import { normaliseHostname } from './hostname.ts';

export interface Site {
  id: string;
  team_id: string;
  domain: string;
  timezone: string;
  /** ClickHouse database holding this site's analytics. */
  tenant: string;
}

interface SiteRow {
  id: string;
  team_id: string;
  domain: string;
  timezone: string;
}

const toSite = (row: SiteRow): Site => ({ ...row, tenant: tenantDatabase(row.team_id) });

export async function createTeam(db: MetadataQueryable, input: { name: string }): Promise<{ id: string; name: string }> {
  const id = randomUUID();
  await db.query('INSERT INTO teams (id, name) VALUES ($1, $2)', [id, input.name]);
  return { id, name: input.name };
}

export async function createSite(db: MetadataQueryable, input: { teamId: string; domain: string; timezone?: string; hostnames?: string[] }): Promise<Site> {
  const problems: FieldError[] = [];
  const domain = normaliseHostname(input.domain);
  if (!domain) problems.push({ field: 'domain', message: `domain ${DOMAIN_MESSAGE}`, type: 'siteDomain' });
  const hostnames = (input.hostnames ?? []).map((h, index) => {
    const host = normaliseHostname(h);
    if (!host) problems.push({ field: `hostnames[${index}]`, message: `hostnames[${index}] ${HOSTNAME_MESSAGE}`, type: 'siteHostname' });
    return host ?? '';
  });
  if (!domain || problems.length > 0) throw validationFailed(problems);
  const id = randomUUID();
  try {
    await db.query('INSERT INTO sites (id, team_id, domain, timezone) VALUES ($1, $2, $3, $4)', [id, input.teamId, domain, input.timezone ?? 'UTC']);
    for (const hostname of hostnames) await db.query('INSERT INTO site_hostnames (hostname, site_id) VALUES ($1, $2)', [hostname, id]);
  } catch (err) {
    if ((err as { code?: string }).code === '23505') throw conflict(`A site for ${domain} already exists`);
    throw err;
  }
  return toSite({ id, team_id: input.teamId, domain, timezone: input.timezone ?? 'UTC' });
}

export interface SiteDirectory {
  /** The live site a browser hostname belongs to (its domain or one of its extra hostnames); at hand when cached. */
  byHostname(hostname: string): Eventually<Site | null>;
  byId(id: string): Promise<Site | null>;
  /** Forget cached answers (after a site changes). */
  invalidate(): void;
}

/** The live site with this id, or 404 "Site not found" (access was checked: a miss means it just went away). */
export async function liveSite(sites: Pick<SiteDirectory, 'byId'>, id: string): Promise<Site> {
  const site = await sites.byId(id);
  if (!site) throw notFound('Site not found');
  return site;
}

interface Cached {
  site: Site | null;
  expires: number;
}

/**
 * Answers are cached for ttlMs (misses for a shorter time, so a new site starts collecting
 * quickly while unknown origins cannot hammer the database). Size-bounded: oldest entries go first.
 */
export function createSiteDirectory(db: () => MetadataQueryable, options: { ttlMs?: number; missTtlMs?: number; maxEntries?: number } = {}): SiteDirectory {
  const ttl = options.ttlMs ?? 30_000;
  const missTtl = options.missTtlMs ?? 5_000;
  const maxEntries = options.maxEntries ?? 10_000;
  // One map for each key, so a lookup hashes the hostname or id as it came (every tracker request
  // asks by hostname) rather than a prefixed copy made for the lookup.
  const byHostname = new Map<string, Cached>();
  const byId = new Map<string, Cached>();

  const remember = (cache: Map<string, Cached>, key: string, site: Site | null) => {
    if (cache.size >= maxEntries) cache.delete(cache.keys().next().value!);
    cache.set(key, { site, expires: Date.now() + (site ? ttl : missTtl) });
    return site;
  };
  const cached = (cache: Map<string, Cached>, key: string) => {
    const hit = cache.get(key);
    if (hit && hit.expires > Date.now()) return hit;
    if (hit) cache.delete(key);
    return undefined;
  };

  const siteOfHostname = async (hostname: string) => {
    const { rows } = await db().query<SiteRow>(
      `SELECT s.id, s.team_id, s.domain, s.timezone FROM sites s
        WHERE s.deleted_at IS NULL
          AND (s.domain = $1 OR s.id = (SELECT site_id FROM site_hostnames WHERE hostname = $1))
        LIMIT 1`,
      [hostname],
    );
    return remember(byHostname, hostname, rows[0] ? toSite(rows[0]) : null);
  };

  return {
    byHostname(hostname) {
      const hit = cached(byHostname, hostname);
      return hit ? hit.site : siteOfHostname(hostname);
    },
    async byId(id) {
      const hit = cached(byId, id);
      if (hit) return hit.site;
      const { rows } = await db().query<SiteRow>('SELECT id, team_id, domain, timezone FROM sites WHERE id = $1 AND deleted_at IS NULL', [id]);
      return remember(byId, id, rows[0] ? toSite(rows[0]) : null);
    },
    invalidate: () => {
      byHostname.clear();
      byId.clear();
    },
  };
}
