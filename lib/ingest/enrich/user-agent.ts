// Browser, OS and device class of a visit from its User-Agent (ua-parser-js 1) and, when the UA
// cannot tell, the viewport width the tracker sends. Names are normalised to one spelling per
// product so a dashboard breakdown shows "Safari" once, not "Safari" and "Mobile Safari".
import UAParser from 'ua-parser-js';
import { BoundedCache } from './cache.ts';

export type DeviceClass = 'desktop' | 'mobile' | 'tablet';

export interface UserAgentInfo {
  browser: string;
  /** Major version only: minor versions split a breakdown into noise. */
  browser_version: string;
  os: string;
  /** Major, or major.minor when the minor is not 0 (macOS 10.15, iOS 17.4, Windows 8.1). */
  os_version: string;
  device: DeviceClass;
}

/**
 * ua-parser-js names → the names Plumb stores. Variants of one product fold into it (the device
 * column already says "mobile"); names not listed pass through as ua-parser-js spells them
 * (Vivaldi, Chromium, DuckDuckGo, Facebook, Instagram, Silk, …).
 */
const BROWSER_NAMES: Record<string, string> = {
  'Mobile Safari': 'Safari',
  'Safari Mobile': 'Safari',
  'Mobile Chrome': 'Chrome',
  'Chrome Mobile': 'Chrome',
  'Chrome Headless': 'Chrome',
  'Chrome WebView': 'Android WebView',
  'Mobile Firefox': 'Firefox',
  'Firefox Focus': 'Firefox',
  'Firefox Reality': 'Firefox',
  'Edge WebView': 'Edge',
  'Edge WebView2': 'Edge',
  'Opera Mobi': 'Opera',
  'Opera Touch': 'Opera',
  'Opera GX': 'Opera',
  'Opera Coast': 'Opera',
  'Samsung Browser': 'Samsung Internet',
  IE: 'Internet Explorer',
  IEMobile: 'Internet Explorer',
  Yandex: 'Yandex Browser',
  UCBrowser: 'UC Browser',
};

/** Linux distributions fold into "Linux": the distribution says nothing about the visitor's device. */
const LINUX_DISTRIBUTIONS = new Set([
  'Arch',
  'CentOS',
  'Debian',
  'Deepin',
  'elementary OS',
  'Fedora',
  'Gentoo',
  'GNU',
  'Knoppix',
  'Kubuntu',
  'Linpus',
  'Linspire',
  'Lubuntu',
  'Mageia',
  'Mandriva',
  'Manjaro',
  'Mint',
  'PCLinuxOS',
  'Raspbian',
  'Red Hat',
  'RedHat',
  'Sabayon',
  'Slackware',
  'SUSE',
  'openSUSE',
  'Ubuntu',
  'VectorLinux',
  'Xubuntu',
  'Zenwalk',
]);

const OS_NAMES: Record<string, string> = {
  'Mac OS': 'macOS',
  macOS: 'macOS',
  'Chromium OS': 'ChromeOS',
  'Chrome OS': 'ChromeOS',
};

/**
 * Operating systems whose UA settles the device class when ua-parser-js reports no type: their
 * browsers run on desktops and laptops. macOS is among them although iPadOS Safari sends a Mac UA
 * by default: the viewport cannot tell a portrait iPad from a Mac window narrowed beside another,
 * and counting every split-screen Mac as a tablet would be the larger error.
 */
const DESKTOP_OS = new Set(['Windows', 'macOS', 'Linux', 'ChromeOS', 'FreeBSD', 'OpenBSD', 'NetBSD', 'Solaris']);

const MAJOR = /^\d+/;
const MAJOR_MINOR = /^(\d+)(?:\.(\d+))?/;
/** Names come out of UA text; capped so a crafted UA cannot fill a LowCardinality column. */
const NAME_MAX = 48;
/** UAs longer than this are not cached: they are bots (see bots.ts) or attacks, never worth a slot. */
const CACHEABLE_UA_MAX = 1000;

/** What the UA alone says; `device` is null when the UA is inconclusive and the viewport decides. */
interface ParsedAgent {
  browser: string;
  browser_version: string;
  os: string;
  os_version: string;
  device: DeviceClass | null;
}

const parser = new UAParser();
const cache = new BoundedCache<ParsedAgent>(5000, CACHEABLE_UA_MAX);

function browserName(name: string | undefined): string {
  if (!name) return '';
  return (BROWSER_NAMES[name] ?? name).slice(0, NAME_MAX);
}

function osName(name: string | undefined): string {
  if (!name) return '';
  if (LINUX_DISTRIBUTIONS.has(name)) return 'Linux';
  return (OS_NAMES[name] ?? name).slice(0, NAME_MAX);
}

function osVersion(version: string | undefined): string {
  if (!version) return '';
  const m = MAJOR_MINOR.exec(version);
  // Non-numeric versions are names ua-parser-js gives old Windows releases (XP, Vista, RT).
  if (!m) return version.slice(0, 16);
  return m[2] === undefined || m[2] === '0' ? m[1] : `${m[1]}.${m[2]}`;
}

function deviceFromType(type: string | undefined, os: string): DeviceClass | null {
  switch (type) {
    case 'mobile':
    case 'wearable':
      return 'mobile';
    case 'tablet':
      return 'tablet';
    // Consoles, TVs and headsets are big screens used from a distance: closer to desktop than to a phone.
    case 'console':
    case 'smarttv':
    case 'xr':
    case 'embedded':
      return 'desktop';
    default:
      return DESKTOP_OS.has(os) ? 'desktop' : null;
  }
}

function parse(ua: string): ParsedAgent {
  const result = parser.setUA(ua).getResult();
  const os = osName(result.os.name);
  const major = result.browser.major ?? MAJOR.exec(result.browser.version ?? '')?.[0] ?? '';
  return {
    browser: browserName(result.browser.name),
    browser_version: MAJOR.test(major) ? major : '',
    os,
    os_version: os === 'Linux' && result.os.name !== 'Linux' ? '' : osVersion(result.os.version),
    device: deviceFromType(result.device.type, os),
  };
}

/** Device class from the viewport width in CSS pixels, on the usual responsive breakpoints. */
function deviceFromWidth(width: number | undefined): DeviceClass {
  if (width === undefined || !Number.isFinite(width) || width <= 0) return 'desktop';
  if (width < 768) return 'mobile';
  if (width < 1024) return 'tablet';
  return 'desktop';
}

/**
 * Browser, OS and device of a User-Agent. Unknown parts are ''. The device comes from the UA when
 * it names one (phone, tablet, a desktop OS), otherwise from `viewportWidth` (< 768 mobile,
 * < 1024 tablet, else desktop), and is 'desktop' when neither tells.
 */
export function parseUserAgent(ua: string, viewportWidth?: number): UserAgentInfo {
  const parsed = cache.getOrMake(ua, parse);
  return {
    browser: parsed.browser,
    browser_version: parsed.browser_version,
    os: parsed.os,
    os_version: parsed.os_version,
    device: parsed.device ?? deviceFromWidth(viewportWidth),
  };
}
