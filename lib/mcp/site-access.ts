// Which site an MCP tool may read, and over how long a range. The check is the REST API's own
// (enforce in lib/auth/access.ts, Site Viewer or higher on the token's site, its role already
// lowered to its owner's), with the `mcp` scope where the REST reads ask for `stats:read`.
import { type AccessRule, enforce } from '../auth/access.ts';
import type { ApiClientPrincipal } from '../auth/api-clients.ts';
import { forbidden, PlumbError, validationFailed } from '../errors.ts';
import { parseRange } from '../analytics/range.ts';
import type { Runtime } from '../runtime.ts';
import { liveSite, type Site } from '../sites/sites.ts';

/** The longest range one tool call reads: an assistant asking for more is told to split it. */
export const MCP_MAX_RANGE_DAYS = 366;
const DAY_MS = 86_400_000;
/** A range of whole local days may be an hour longer than its days where a DST change falls in it. */
const DST_SLACK_MS = 3_600_000;

const READ_SITE: AccessRule = { site: { param: 'id', role: 'viewer', scope: 'mcp' } };

/** The site, when the token may read it; otherwise an error that says so without telling whether the site exists. */
export async function readableSite(runtime: Pick<Runtime, 'metadata' | 'sites'>, client: ApiClientPrincipal | undefined, siteId: string): Promise<Site> {
  try {
    await enforce(runtime.metadata(), { apiClient: client }, 'client', READ_SITE, { id: siteId });
  } catch (err) {
    if (err instanceof PlumbError && err.code === 404) {
      throw forbidden(`This token cannot view the site ${siteId}: list_sites names the sites it can read`);
    }
    throw err;
  }
  return liveSite(runtime.sites, siteId);
}

/**
 * Refuses a range (and a year-ago comparison of it) longer than MCP_MAX_RANGE_DAYS; the range's
 * own problems (a malformed date, an end before the start) are refused as the REST API refuses them.
 */
export function checkRangeLength(site: Pick<Site, 'timezone'>, input: { from?: string; to?: string }, now = new Date()): void {
  const range = parseRange(input, site.timezone, now);
  const length = range.to.getTime() - range.from.getTime();
  if (length > MCP_MAX_RANGE_DAYS * DAY_MS + DST_SLACK_MS) {
    const days = Math.round(length / DAY_MS);
    throw validationFailed([{ field: 'to', message: `to is ${days} days after from; one call reads at most ${MCP_MAX_RANGE_DAYS} days, so split the range`, type: 'rangeMax' }]);
  }
}
