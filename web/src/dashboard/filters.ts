// Dashboard filters as the stats API spells them (`dimension:op:value`), with their labels.
export interface Filter {
  dimension: string;
  op: 'is' | 'is_not' | 'contains' | 'matches';
  value: string;
}

export const DIMENSION_LABELS: Record<string, string> = {
  page: 'Page',
  entry_page: 'Entry page',
  exit_page: 'Exit page',
  hostname: 'Hostname',
  source: 'Source',
  channel: 'Channel',
  referrer: 'Referrer',
  utm_source: 'UTM source',
  utm_medium: 'UTM medium',
  utm_campaign: 'UTM campaign',
  utm_term: 'UTM term',
  utm_content: 'UTM content',
  country: 'Country',
  region: 'Region',
  browser: 'Browser',
  os: 'Operating system',
  device: 'Device',
};

const OP_LABELS: Record<Filter['op'], string> = { is: 'is', is_not: 'is not', contains: 'contains', matches: 'matches' };

export function parseFilter(text: string): Filter | null {
  const first = text.indexOf(':');
  const second = first < 0 ? -1 : text.indexOf(':', first + 1);
  if (second < 0) return null;
  const dimension = text.slice(0, first);
  const op = text.slice(first + 1, second);
  if (!(dimension in DIMENSION_LABELS) || !(op in OP_LABELS)) return null;
  return { dimension, op: op as Filter['op'], value: text.slice(second + 1) };
}

export const formatFilter = (f: Filter) => `${f.dimension}:${f.op}:${f.value}`;

export function describeFilter(f: Filter): string {
  const value = f.dimension === 'country' ? countryName(f.value) : f.value;
  return `${DIMENSION_LABELS[f.dimension]} ${OP_LABELS[f.op]} ${value}`;
}

let regionNames: Intl.DisplayNames | null = null;
export function countryName(code: string): string {
  if (!/^[A-Z]{2}$/.test(code)) return code;
  regionNames ??= new Intl.DisplayNames(undefined, { type: 'region' });
  try {
    return regionNames.of(code) ?? code;
  } catch {
    return code;
  }
}
