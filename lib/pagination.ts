// The one shape of a list answer (API conventions: `{items, total, limit, offset, has_more}`).

export interface Page<T> {
  items: T[];
  total: number;
  limit: number;
  offset: number;
  has_more: boolean;
}

export interface PageQuery {
  limit: number;
  offset: number;
}

export const pageOf = <T>(items: T[], total: number, query: PageQuery): Page<T> => ({
  items,
  total,
  limit: query.limit,
  offset: query.offset,
  has_more: query.offset + items.length < total,
});
