// The IANA time zones this browser knows, and finding one from a few typed letters: "berl" finds
// Europe/Berlin, "new york" America/New_York, "utc" UTC.

/** Every zone, UTC first (ICU lists canonical zones only and may leave "UTC" itself out). */
export const TIME_ZONES: readonly string[] = ['UTC', ...Intl.supportedValuesOf('timeZone').filter((z) => z !== 'UTC')];

const known = new Set(TIME_ZONES);
const words = (text: string) => text.trim().toLowerCase().replace(/_/g, ' ');

/**
 * The zones matching what was typed, best first: a city that starts with it (Berlin for "berl"),
 * then a zone that starts with it (Europe/… for "eur"), then a word of it, then any part of it;
 * alphabetical within each. Nothing typed: every zone.
 */
export function matchZones(query: string, zones: readonly string[] = TIME_ZONES): string[] {
  const q = words(query);
  if (q === '') return [...zones];
  const ranked: [number, string][] = [];
  for (const zone of zones) {
    const text = words(zone);
    const city = text.slice(text.lastIndexOf('/') + 1);
    let rank: number;
    if (city.startsWith(q)) rank = 0;
    else if (text.startsWith(q)) rank = 1;
    else if (text.split(/[/ -]/).some((word) => word.startsWith(q))) rank = 2;
    else if (text.includes(q)) rank = 3;
    else continue;
    ranked.push([rank, zone]);
  }
  return ranked.sort((a, b) => a[0] - b[0] || a[1].localeCompare(b[1])).map(([, zone]) => zone);
}

/**
 * The zone the text names exactly (any case, spaces for underscores), or an alias the browser
 * resolves to one (Europe/Kiev → Europe/Kyiv); null when it names none.
 */
export function exactZone(text: string): string | null {
  const q = words(text);
  if (q === '') return null;
  const listed = TIME_ZONES.find((zone) => words(zone) === q);
  if (listed) return listed;
  try {
    const resolved = new Intl.DateTimeFormat('en', { timeZone: text.trim().replace(/ /g, '_') }).resolvedOptions().timeZone;
    return known.has(resolved) ? resolved : null;
  } catch {
    return null;
  }
}

const offsetFormats = new Map<string, Intl.DateTimeFormat>();

/** The zone's offset from UTC now, as "UTC+1", "UTC−3:30" or "UTC". */
export function zoneOffset(zone: string, at = new Date()): string {
  let format = offsetFormats.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'shortOffset' });
    offsetFormats.set(zone, format);
  }
  const name = format.formatToParts(at).find((part) => part.type === 'timeZoneName')?.value ?? 'GMT';
  // ICU writes UTC itself as "GMT" or "GMT+0".
  return name === 'GMT' || name === 'GMT+0' ? 'UTC' : name.replace('GMT', 'UTC').replace('-', '−');
}

/** The browser's own zone, when it is one Plumb knows; else UTC. */
export function browserZone(): string {
  return exactZone(Intl.DateTimeFormat().resolvedOptions().timeZone ?? '') ?? 'UTC';
}
