// Whether a pageview or a custom event matches a goal (or a funnel step), decided the same way in
// memory (new conversions at ingest) and in ClickHouse (conversions in stats): a path pattern is
// an exact path where `*` stands for any run of characters, `/` included; an event matches by
// exact name and every property condition (AND) by exact key and value.

export type MatchType = 'event' | 'path';

export interface PropertyCondition {
  key: string;
  value: string;
}

/** What decides a match: a goal or a funnel step. */
export interface Matchable {
  type: MatchType;
  event_name?: string;
  property_conditions?: readonly PropertyCondition[];
  path_pattern?: string;
}

/** A stored pageview (`hits`) or event (`events`) row, as the ingest writer hands it over. */
export interface StoredRow {
  table: string;
  row: Record<string, unknown>;
  /** The row's site_id, when the record carries it beside the row: reading it does not decode the row. */
  siteId?: string;
}

const REGEXP_SPECIAL = /[.*+?^${}()|[\]\\]/g;

/** An anchored RegExp for a path pattern: `*` is any run of characters, everything else literal. */
export function pathPatternRegExp(pattern: string): RegExp {
  const source = pattern
    .split('*')
    .map((part) => part.replace(REGEXP_SPECIAL, '\\$&'))
    .join('.*');
  // `s`: a path could hold a newline (percent-decoding aside); `*` must cross it as LIKE's % does.
  return new RegExp(`^${source}$`, 's');
}

/**
 * The ClickHouse LIKE pattern of a path pattern, to be bound as a parameter: LIKE's own wildcards
 * (`%`, `_`) and its escape character are escaped so they match themselves, and `*` becomes `%`.
 */
export function pathPatternToLike(pattern: string): string {
  return pattern
    .split('*')
    .map((part) => part.replace(/[\\%_]/g, '\\$&'))
    .join('%');
}

export function matchesPath(pattern: string, path: string): boolean {
  if (!pattern.includes('*')) return pattern === path;
  return pathPatternRegExp(pattern).test(path);
}

/** Every condition holds: the property is present with exactly that (string) value. */
export function matchesProperties(conditions: readonly PropertyCondition[] | undefined, props: Record<string, unknown> | undefined): boolean {
  if (!conditions || conditions.length === 0) return true;
  if (!props) return false;
  return conditions.every((c) => Object.hasOwn(props, c.key) && String(props[c.key]) === c.value);
}

export function matchesEvent(target: Matchable, name: string, props: Record<string, unknown> | undefined): boolean {
  return target.type === 'event' && target.event_name === name && matchesProperties(target.property_conditions, props);
}

/** A compiled matcher for one target: the wildcard RegExp is built once, not per row. */
export function compileMatcher(target: Matchable): (stored: StoredRow) => boolean {
  if (target.type === 'path') {
    const pattern = target.path_pattern ?? '';
    const regexp = pattern.includes('*') ? pathPatternRegExp(pattern) : null;
    return (stored) => {
      if (stored.table !== 'hits') return false;
      const path = String(stored.row.path ?? '');
      return regexp ? regexp.test(path) : path === pattern;
    };
  }
  return (stored) => stored.table === 'events' && matchesEvent(target, String(stored.row.name ?? ''), stored.row.props as Record<string, unknown> | undefined);
}
