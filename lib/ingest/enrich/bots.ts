// Server-side bot filter for pageviews and events: isbot's crawler list, plus the headless and
// automation tools that look like real browsers, the AI agents of our catalog (they are recorded
// through the AI-fetch route, never as visitors), and UAs no browser sends (none, or absurdly long).
import { isbot } from 'isbot';
import { matchAiAgent } from './ai-agents.ts';
import { BoundedCache } from './cache.ts';

type Headers = Record<string, string | string[] | undefined>;

/** Longer than any browser's UA; only generators and attacks send these. */
const UA_MAX = 1000;

/**
 * Automation markers isbot leaves out because they sit in otherwise ordinary browser UAs:
 * HeadlessChrome (Puppeteer and Playwright defaults), PhantomJS, SlimerJS, jsdom, Selenium and
 * WebDriver labels, Lighthouse and PageSpeed Insights, Cypress's Electron runner, Nightmare.
 */
const AUTOMATION = /headless|phantomjs|slimerjs|\bjsdom\b|puppeteer|playwright|selenium|webdriver|lighthouse|page ?speed|\bcypress\b|nightmare|zombie\.js|htmlunit/i;

/**
 * Electron without a Chrome token is a bare BrowserWindow, the usual shape of an Electron scraper.
 * Desktop apps built on Electron (Slack, Teams, Notion) keep the Chrome token and are people.
 */
const ELECTRON = /\bElectron\/\d/;
const CHROME = /\bChrome\/\d/;

/** Brand lists from Client Hints: headless Chrome announces itself there even with a spoofed UA. */
const HEADLESS_BRAND = /HeadlessChrome/i;

const cache = new BoundedCache<boolean>(5000);

function uaIsBot(ua: string): boolean {
  return isbot(ua) || AUTOMATION.test(ua) || (ELECTRON.test(ua) && !CHROME.test(ua)) || matchAiAgent(ua) !== null;
}

function header(headers: Headers, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/**
 * True when a request should not count as a visit. `headers` (lower-case names, as Node gives
 * them) are the browser request's own; server-side ingest passes none, since its headers are the
 * API client's, not the visitor's.
 */
export function isBotRequest(ua: string | undefined, headers?: Headers): boolean {
  if (ua === undefined || ua.length > UA_MAX || ua.trim() === '') return true;
  const verdict = cache.getOrMake(ua, uaIsBot);
  if (verdict || headers === undefined) return verdict;
  const brands = header(headers, 'sec-ch-ua');
  if (brands !== undefined && HEADLESS_BRAND.test(brands)) return true;
  // Crawlers name their operator in From (RFC 9110); browsers never send it.
  return header(headers, 'from') !== undefined;
}
