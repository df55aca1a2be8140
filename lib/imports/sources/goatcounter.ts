// GoatCounter's CSV export (Settings → Export, "Individual pageviews" on): one line per pageview
// or event, header `2Path,Title,Event,UserAgent,Browser,System,Session,Bot,Referrer,Referrer
// scheme,Screen size,Location,FirstVisit,Date` (format version 2, the number before "Path"). Sent
// as GoatCounter gives it (.csv.gz), unpacked (.csv), or zipped. Bot requests are left out; an
// event line (Event true) is a custom event named by its path; GoatCounter's session id groups
// the lines into visits and visitors.
import { csvRecords } from '../files.ts';
import { emptyUtm, type RawFormat, type RawRow, rawSource } from '../raw.ts';

const COLUMNS = ['2Path', 'Title', 'Event', 'UserAgent', 'User-Agent', 'Browser', 'System', 'Session', 'Bot', 'Referrer', 'Referrer scheme', 'Screen size', 'Location', 'FirstVisit', 'Date'] as const;
const REQUIRED = ['2Path', 'Event', 'Session', 'Bot', 'Date'] as const;
const PATH_MAX = 1024;

/** "Firefox 133.0" → name and major version; "Windows 10" → "Windows", "10". */
export function nameAndVersion(text: string, keepMinor: boolean): { name: string; version: string } {
  const match = /^(.*?)\s+v?(\d+(?:\.\d+)*)$/.exec(text.trim());
  if (!match) return { name: text.trim(), version: '' };
  const [major, minor] = match[2].split('.');
  return { name: match[1], version: keepMinor && minor && minor !== '0' ? `${major}.${minor}` : major };
}

const MOBILE_SYSTEMS = new Set(['iOS', 'Android', 'iPadOS']);

/** The device class as ingest derives it from a width: < 768 mobile, < 1024 tablet, else desktop. */
export function deviceOf(width: number, os: string): string {
  if (width > 0) return width < 768 ? 'mobile' : width < 1024 ? 'tablet' : 'desktop';
  return MOBILE_SYSTEMS.has(os) ? 'mobile' : 'desktop';
}

const isTrue = (value: string) => ['true', '1', 'on', 'yes'].includes(value.trim().toLowerCase());

const format: RawFormat = {
  id: 'goatcounter',
  label: 'GoatCounter',
  description:
    'GoatCounter’s CSV export of individual pageviews (Settings → Export; the site must have “Individual pageviews” enabled). Upload the file as downloaded (.csv.gz), unpacked (.csv), or in a .zip. Bot requests are left out; events become custom events.',
  extensions: ['.csv', '.csv.gz', '.zip'],
  reads: ['.csv'],
  maxFiles: 10,
  async read(file, sink, ctx) {
    for await (const { line, record } of csvRecords(file, { columns: COLUMNS, required: REQUIRED })) {
      const kind = isTrue(record.Event) ? 'event' : 'pageview';
      const bot = record.Bot.trim();
      if (bot !== '' && bot !== '0') {
        sink.skip(kind, 'bot request', file.name, line, `GoatCounter marked it as a bot (${bot})`);
        continue;
      }
      const path = record['2Path'].trim().slice(0, PATH_MAX);
      if (path === '') {
        sink.skip(kind, 'no path', file.name, line, 'the path is empty');
        continue;
      }
      const browser = nameAndVersion(record.Browser, false);
      const system = nameAndVersion(record.System, true);
      const width = Number.parseInt(record['Screen size'].split(',')[0] ?? '', 10);
      const session = record.Session.trim() || `${file.name}:${line}`;
      const referrer = record.Referrer.trim();
      const scheme = record['Referrer scheme'].trim();
      const utm = emptyUtm();
      if (scheme === 'c') utm.utm_source = referrer;
      const row: RawRow = {
        kind,
        at: new Date(record.Date.trim()),
        visitKey: session,
        visitorKey: session,
        path: kind === 'event' ? '' : path,
        hostname: ctx.site.domain,
        // GoatCounter keeps a referrer URL without its scheme.
        referrer: scheme === 'h' && referrer !== '' ? (/^[a-z][a-z0-9+.-]*:\/\//i.test(referrer) ? referrer : `https://${referrer}`) : '',
        referrerName: scheme === 'g' || scheme === 'o' ? referrer : '',
        utm,
        country: record.Location.trim().slice(0, 2).toUpperCase(),
        region: '',
        browser: browser.name,
        browser_version: browser.version,
        os: system.name,
        os_version: system.version,
        device: deviceOf(Number.isFinite(width) ? width : 0, system.name),
        screen_width: Number.isFinite(width) && width > 0 && width < 65536 ? width : 0,
        name: kind === 'event' ? path : undefined,
      };
      await sink.row(file.name, line, row);
    }
  },
};

export const goatcounter = rawSource(format);
