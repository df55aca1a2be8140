// Plausible's spellings of a visit's origin and client → the ones Plumb's ingest stores
// (lib/ingest/enrich), so an imported day and a native day group under the same breakdown values
// and the same filters match both. Values Plumb has no name for pass through unchanged.
import { classifyReferrer } from '../../ingest/enrich/referrer.ts';

/** Plausible's word for an unknown value; Plumb leaves such a value empty. */
const NOT_SET = '(not set)';
const DIRECT = 'Direct / None';

const known = (value: string) => (value === NOT_SET ? '' : value);

/**
 * Source and referrer of an imported_sources row. Plausible's referrer is a URL, often without
 * its scheme; Plumb keeps the referrer's host and names the source from its catalog (Google,
 * Hacker News, …) by the referrer or by Plausible's own source name, else the host or that name.
 */
export function plausibleOrigin(source: string, referrer: string): { source: string; referrer: string } {
  const named = known(source) === DIRECT ? '' : known(source);
  const url = known(referrer);
  const withScheme = url === '' || /^[a-z][a-z0-9+.-]*:\/\//i.test(url) ? url : `https://${url}`;
  const origin = classifyReferrer(withScheme || undefined, '', named);
  return { source: named === '' && origin.referrer === '' ? '' : origin.source_name, referrer: origin.referrer };
}

/** Plausible's screen-size classes → Plumb's device classes (a laptop is a desktop to Plumb). */
const DEVICES: Record<string, string> = { Desktop: 'desktop', Laptop: 'desktop', Mobile: 'mobile', Tablet: 'tablet' };

export function plausibleDevice(device: string): string {
  return DEVICES[device] ?? known(device);
}

/** Browser names Plausible spells differently from Plumb (lib/ingest/enrich/user-agent.ts). */
const BROWSERS: Record<string, string> = {
  'Microsoft Edge': 'Edge',
  'Samsung Browser': 'Samsung Internet',
  'Mobile Safari': 'Safari',
  'Chrome Mobile': 'Chrome',
  'Chrome Mobile iOS': 'Chrome',
  'Firefox Mobile': 'Firefox',
  'Firefox Mobile iOS': 'Firefox',
  'Opera Mobile': 'Opera',
  'Chrome Webview': 'Android WebView',
  'Android Browser': 'Android WebView',
};

export function plausibleBrowser(browser: string): string {
  return BROWSERS[browser] ?? known(browser);
}

/** Operating system names Plausible spells differently from Plumb. */
const SYSTEMS: Record<string, string> = { Mac: 'macOS', 'Mac OS': 'macOS', 'GNU/Linux': 'Linux', Ubuntu: 'Linux', Fedora: 'Linux', 'Chrome OS': 'ChromeOS' };

export function plausibleOperatingSystem(os: string): string {
  return SYSTEMS[os] ?? known(os);
}

/** Plumb keeps a browser's major version only. */
export function plausibleBrowserVersion(version: string): string {
  return /^\d+/.exec(known(version))?.[0] ?? known(version);
}

/** Plumb keeps an OS version as major, or major.minor when the minor is not 0 (10.15, 17.4). */
export function plausibleOsVersion(version: string): string {
  const match = /^(\d+)(?:\.(\d+))?/.exec(known(version));
  if (!match) return known(version);
  return match[2] && Number(match[2]) !== 0 ? `${match[1]}.${Number(match[2])}` : match[1];
}

/** ISO 3166-1 alpha-2, upper case; anything else (Plausible's ZZ for unknown, empty) is ''. */
export function plausibleCountry(country: string): string {
  const code = country.trim().toUpperCase();
  return /^[A-Z]{2}$/.test(code) && code !== 'ZZ' ? code : '';
}

/** Regions stay as Plausible writes them (ISO 3166-2 codes such as DE-BY); only "(not set)" is emptied. */
export const plausibleRegion = known;
