// Paging of every list route: the one set of query params (`limit`, `offset`), their one default
// and maximum, and the one set of fields a list answer carries (`{items, total, limit, offset,
// has_more}`, or `entries`/`rows` where a route documents another name for its list).

/** Items on a page when the request names no `limit` (the team audit's contract figure, for every list). */
export const DEFAULT_PAGE_SIZE = 25;
/** The largest `limit` any list accepts; above it the request is refused with 400 naming `limit`. */
export const MAX_PAGE_SIZE = 200;
/** Beyond this an OFFSET would overflow PostgreSQL's integer parameters; no real list gets near it. */
export const MAX_OFFSET = 2_147_483_647;

/**
 * The query params of every list route (fastest-validator rules). Query params arrive as text:
 * converted, then checked as integers.
 */
export const pageParams = {
  limit: { type: 'number', integer: true, min: 1, max: MAX_PAGE_SIZE, optional: true, default: DEFAULT_PAGE_SIZE, convert: true },
  offset: { type: 'number', integer: true, min: 0, max: MAX_OFFSET, optional: true, default: 0, convert: true },
} as const;

export interface PageQuery {
  limit: number;
  offset: number;
}

/** What every list answer says about its page, beside the list itself. */
export interface PageFields {
  total: number;
  limit: number;
  offset: number;
  has_more: boolean;
}

export interface Page<T> extends PageFields {
  items: T[];
}

/** The page fields of a list of `count` entries out of `total`, read at `query`. */
export const pageFields = (count: number, total: number, query: PageQuery): PageFields => ({
  total,
  limit: query.limit,
  offset: query.offset,
  has_more: query.offset + count < total,
});

export const pageOf = <T>(items: T[], total: number, query: PageQuery): Page<T> => ({ items, ...pageFields(items.length, total, query) });
