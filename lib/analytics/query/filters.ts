// Parses the repeatable `filter=dimension:op:value` query parameter of the stats API into typed
// filters. Only the first two colons separate, so a value may contain ':' (paths, referrers);
// `is` and `is_not` take several values separated by '|'. Anything malformed is a 400 whose
// `fields` quote each refused filter, so the caller sees which of several it was.
import { type FieldError, validationFailed } from '../../errors.ts';

/** Every dimension a filter can name (the API's spelling). */
export const FILTER_DIMENSIONS = [
  'page',
  'entry_page',
  'exit_page',
  'hostname',
  'source',
  'channel',
  'referrer',
  'utm_source',
  'utm_medium',
  'utm_campaign',
  'utm_term',
  'utm_content',
  'country',
  'region',
  'browser',
  'os',
  'device',
] as const;
export type FilterDimension = (typeof FILTER_DIMENSIONS)[number];

export const FILTER_OPERATORS = ['is', 'is_not', 'contains', 'matches'] as const;
export type FilterOperator = (typeof FILTER_OPERATORS)[number];

export interface Filter {
  dimension: FilterDimension;
  op: FilterOperator;
  /** One value, or several for `is`/`is_not` (any of them). Never empty strings. */
  values: string[];
}

/** Bounds that keep one request's SQL small; generous for any dashboard. */
export const MAX_FILTERS = 20;
export const MAX_VALUES = 100;
export const MAX_VALUE_LENGTH = 2048;

const isDimension = (value: string): value is FilterDimension => (FILTER_DIMENSIONS as readonly string[]).includes(value);
const isOperator = (value: string): value is FilterOperator => (FILTER_OPERATORS as readonly string[]).includes(value);

/** How a refused filter is quoted: whole when short, so the caller sees which of several it was. */
const quoted = (text: string) => `"${text.length > 64 ? `${text.slice(0, 64)}…` : text}"`;

/** One `dimension:op:value` text → a filter, or why it is refused. */
function readFilter(text: string): Filter | string {
  const refuse = (why: string) => `filter ${quoted(text)}: ${why}`;
  const first = text.indexOf(':');
  const second = first < 0 ? -1 : text.indexOf(':', first + 1);
  if (second < 0) return refuse('write it as dimension:operator:value');
  const dimension = text.slice(0, first);
  const op = text.slice(first + 1, second);
  const raw = text.slice(second + 1);
  if (!isDimension(dimension)) return refuse(`the dimension must be one of: ${FILTER_DIMENSIONS.join(', ')}`);
  if (!isOperator(op)) return refuse(`the operator must be one of: ${FILTER_OPERATORS.join(', ')}`);
  // contains/matches take their value whole: a '|' there is part of the text searched for.
  const values = op === 'is' || op === 'is_not' ? raw.split('|') : [raw];
  if (values.some((v) => v === '')) return refuse('the value must not be empty');
  if (values.length > MAX_VALUES) return refuse(`at most ${MAX_VALUES} values`);
  if (values.some((v) => v.length > MAX_VALUE_LENGTH)) return refuse(`a value may have at most ${MAX_VALUE_LENGTH} characters`);
  return { dimension, op, values: [...new Set(values)] };
}

const filterProblem = (message: string): FieldError => ({ field: 'filter', message, type: 'filter' });

/** One `dimension:op:value` text → a filter, or a 400 naming it. */
export function parseFilter(text: string): Filter {
  const read = readFilter(text);
  if (typeof read === 'string') throw validationFailed([filterProblem(read)]);
  return read;
}

/**
 * The `filter` parameter as the gateway hands it over: absent, one string, or an array when
 * repeated. Anything else (qs turns `filter[x]=…` into an object) is refused. Filters AND-combine.
 * Each refused filter is added to `problems`.
 */
export function checkFilters(input: unknown, problems: FieldError[]): Filter[] {
  if (input === undefined || input === null) return [];
  const texts = Array.isArray(input) ? input : [input];
  if (texts.some((t) => typeof t !== 'string')) {
    problems.push(filterProblem('filter must be given as filter=dimension:operator:value (repeat it to combine)'));
    return [];
  }
  if (texts.length > MAX_FILTERS) {
    problems.push(filterProblem(`filter may be given at most ${MAX_FILTERS} times`));
    return [];
  }
  const filters: Filter[] = [];
  for (const text of texts as string[]) {
    const read = readFilter(text);
    if (typeof read === 'string') problems.push(filterProblem(read));
    else filters.push(read);
  }
  return filters;
}

/** checkFilters on its own: a 400 naming every refused filter. */
export function parseFilters(input: unknown): Filter[] {
  const problems: FieldError[] = [];
  const filters = checkFilters(input, problems);
  if (problems.length > 0) throw validationFailed(problems);
  return filters;
}

/**
 * A `matches` value as a LIKE pattern: '*' matches any run of characters; LIKE's own wildcards
 * and escape character in the user's text are escaped, so they match only themselves.
 */
export function wildcardToLike(value: string): string {
  return value.replace(/[\\%_]/g, (c) => `\\${c}`).replace(/\*/g, '%');
}
