// Umami's events as a CSV of its `website_event` table (Umami's data export, or
// `\copy (SELECT … FROM website_event JOIN session USING (session_id) …) TO … CSV HEADER`): one row
// per pageview (event_type 1) or custom event (event_type 2), with its session and visit ids,
// page, referrer, campaign and, when present, the session's browser, OS, device, screen and
// country. Other event types are left out. Umami's visit id groups rows into visits, its session
// id into visitors.
import { csvRecords } from '../files.ts';
import { emptyUtm, type RawFormat, type RawRow, rawSource } from '../raw.ts';
import { deviceOf, nameAndVersion } from './goatcounter.ts';

const UTM = ['utm_source', 'utm_medium', 'utm_campaign', 'utm_content', 'utm_term'] as const;
const COLUMNS = [
  'website_id', 'session_id', 'visit_id', 'event_id', 'created_at', 'hostname', 'url_path', 'url_query', 'referrer_path', 'referrer_query', 'referrer_domain',
  'page_title', 'event_type', 'event_name', ...UTM, 'browser', 'os', 'device', 'screen', 'country',
] as const;
const REQUIRED = ['website_id', 'session_id', 'created_at', 'url_path', 'event_type'] as const;
const PATH_MAX = 1024;

/** Umami's browser keys (from its detection library) → the names Plumb's ingest stores. */
const BROWSERS: Record<string, string> = {
  chrome: 'Chrome', crios: 'Chrome', 'chromium-webview': 'Android WebView', firefox: 'Firefox', fxios: 'Firefox', safari: 'Safari', ios: 'Safari',
  'ios-webview': 'Safari', edge: 'Edge', 'edge-chromium': 'Edge', 'edge-ios': 'Edge', opera: 'Opera', 'opera-mini': 'Opera', samsung: 'Samsung Internet',
  ie: 'Internet Explorer', yandexbrowser: 'Yandex Browser', brave: 'Brave', facebook: 'Facebook', instagram: 'Instagram', silk: 'Silk', android: 'Android Browser',
};
const SYSTEMS: Record<string, string> = { 'Mac OS': 'macOS', 'Android OS': 'Android', 'Chrome OS': 'Chrome OS', 'iOS': 'iOS', 'Linux': 'Linux' };

/** Umami writes `2024-05-01 12:34:56` (UTC) or ISO 8601. */
function instant(text: string): Date {
  const value = text.trim().replace(' ', 'T');
  return new Date(/(Z|[+-]\d\d:?\d\d)$/i.test(value) ? value : `${value}Z`);
}

function campaign(query: string): Record<(typeof UTM)[number], string> {
  const utm = emptyUtm();
  if (query === '') return utm;
  const params = new URLSearchParams(query.startsWith('?') ? query.slice(1) : query);
  for (const key of UTM) utm[key] = (params.get(key) ?? '').trim().slice(0, 256);
  return utm;
}

const format: RawFormat = {
  id: 'umami',
  label: 'Umami',
  description:
    'A CSV of Umami’s website_event table with a header line (Umami’s data export, or psql \\copy of website_event joined with session for browser, OS, device and country). Upload .csv files, .csv.gz, or a .zip of them. Pageviews (event_type 1) and custom events (event_type 2) are imported.',
  extensions: ['.csv', '.csv.gz', '.zip'],
  reads: ['.csv'],
  maxFiles: 20,
  async read(file, sink, ctx) {
    const websites = new Set<string>();
    for await (const { line, record } of csvRecords(file, { columns: COLUMNS, required: REQUIRED })) {
      const type = record.event_type.trim();
      const kind = type === '2' ? 'event' : 'pageview';
      if (type !== '1' && type !== '2') {
        sink.skip(kind, 'not a pageview or custom event', file.name, line, `event_type ${type || '(empty)'}`);
        continue;
      }
      websites.add(record.website_id.trim());
      const path = record.url_path.trim().slice(0, PATH_MAX);
      if (kind === 'pageview' && path === '') {
        sink.skip(kind, 'no path', file.name, line, 'url_path is empty');
        continue;
      }
      const name = record.event_name.trim();
      if (kind === 'event' && name === '') {
        sink.skip(kind, 'event without a name', file.name, line, 'event_name is empty');
        continue;
      }
      const session = record.session_id.trim() || `${file.name}:${line}`;
      const utm = campaign(record.url_query.trim());
      for (const key of UTM) if (record[key].trim() !== '') utm[key] = record[key].trim().slice(0, 256);
      const domain = record.referrer_domain.trim();
      const referrerQuery = record.referrer_query.trim();
      const system = nameAndVersion(SYSTEMS[record.os.trim()] ?? record.os.trim(), true);
      const width = Number.parseInt(record.screen.split('x')[0] ?? '', 10);
      const browserKey = record.browser.trim().toLowerCase();
      const device = record.device.trim().toLowerCase();
      const row: RawRow = {
        kind,
        at: instant(record.created_at),
        visitKey: record.visit_id.trim() || session,
        visitorKey: session,
        path,
        hostname: record.hostname.trim().toLowerCase().replace(/^www\./, '') || ctx.site.domain,
        referrer: domain === '' ? '' : `https://${domain}${record.referrer_path.trim()}${referrerQuery ? `?${referrerQuery.replace(/^\?/, '')}` : ''}`,
        referrerName: '',
        utm,
        country: record.country.trim().slice(0, 2).toUpperCase(),
        region: '',
        browser: BROWSERS[browserKey] ?? (browserKey ? browserKey[0].toUpperCase() + browserKey.slice(1) : ''),
        browser_version: '',
        os: system.name,
        os_version: system.version,
        device: device === 'mobile' || device === 'tablet' || device === 'desktop' ? device : device === 'laptop' ? 'desktop' : deviceOf(Number.isFinite(width) ? width : 0, system.name),
        screen_width: Number.isFinite(width) && width > 0 && width < 65536 ? width : 0,
        name: kind === 'event' ? name : undefined,
      };
      await sink.row(file.name, line, row);
    }
    if (websites.size > 1) {
      sink.warn(`${file.name} holds rows of ${websites.size} Umami websites (${[...websites].slice(0, 3).join(', ')}${websites.size > 3 ? ', …' : ''}); all of them are imported into this site`);
    }
  },
};

export const umami = rawSource(format);
