// isBotRequest: crawlers, headless browsers and automation tools, AI agents, and UAs no browser
// sends are not visitors; real browsers are.
import { describe, expect, it } from '@jest/globals';
import { isBotRequest } from '../../lib/ingest/enrich/bots.ts';

const BROWSERS: [string, string][] = [
  ['Chrome on Windows', 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36'],
  ['Safari on iPhone', 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4.1 Mobile/15E148 Safari/604.1'],
  ['Safari on iPad', 'Mozilla/5.0 (iPad; CPU OS 16_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.6 Mobile/15E148 Safari/604.1'],
  ['Samsung Internet', 'Mozilla/5.0 (Linux; Android 13; SM-S911B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/24.0 Chrome/117.0.0.0 Mobile Safari/537.36'],
  ['Firefox on Android', 'Mozilla/5.0 (Android 14; Mobile; rv:125.0) Gecko/125.0 Firefox/125.0'],
  ['Edge', 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 Edg/124.0.2478.51'],
  ['Firefox on Ubuntu', 'Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0'],
  ['Facebook in-app browser', 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/21E219 [FBAN/FBIOS;FBAV/458.0.0.38.108;FBBV/583296861;FBDV/iPhone15,2;FBMD/iPhone;FBSN/iOS;FBSV/17.4;FBSS/3;FBID/phone;FBLC/en_US;FBOP/5]'],
  ['Slack (Electron app with Chrome token)', 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Slack/4.36.140 Chrome/120.0.6099.56 Electron/28.0.0 Safari/537.36 Sonic Slack_SSB/4.36.140'],
];

const BOTS: [string, string][] = [
  ['Googlebot', 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)'],
  ['Bingbot', 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm) Chrome/116.0.1938.76 Safari/537.36'],
  ['curl', 'curl/8.5.0'],
  ['python-requests', 'python-requests/2.31.0'],
  ['HeadlessChrome (Puppeteer, Playwright defaults)', 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/124.0.6367.60 Safari/537.36'],
  ['PhantomJS', 'Mozilla/5.0 (Unknown; Linux x86_64) AppleWebKit/538.1 (KHTML, like Gecko) PhantomJS/2.1.1 Safari/538.1'],
  ['Puppeteer label', 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 Puppeteer'],
  ['Playwright label', 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 Playwright/1.44'],
  ['Selenium label', 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 Selenium'],
  ['WebDriver label', 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 WebDriver'],
  ['Lighthouse', 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/109.0.5414.120 Safari/537.36 Lighthouse'],
  ['Chrome-Lighthouse', 'Mozilla/5.0 (Linux; Android 11; moto g power (2022)) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/119.0.0.0 Mobile Safari/537.36 Chrome-Lighthouse'],
  ['Google Page Speed', 'Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/41.0.2272.96 Mobile Safari/537.36 (compatible; Google Page Speed Insights)'],
  ['Cypress', 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Cypress/13.6.0 Chrome/118.0.5993.159 Electron/27.1.3 Safari/537.36'],
  ['jsdom', 'Mozilla/5.0 (linux) AppleWebKit/537.36 (KHTML, like Gecko) jsdom/24.0.0'],
  ['Nightmare (bare Electron)', 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_11_2) AppleWebKit/537.36 (KHTML, like Gecko) Electron/0.35.2 Safari/537.36'],
  ['GPTBot', 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)'],
  ['ChatGPT-User', 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot'],
  ['ClaudeBot', 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)'],
  ['NovaAct in a Chrome UA (known only to the AI catalog)', 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/134.0.0.0 Safari/537.36 NovaAct'],
];

describe('isBotRequest', () => {
  it.each(BROWSERS)('lets %s through', (_, ua) => {
    expect(isBotRequest(ua)).toBe(false);
  });

  it.each(BOTS)('rejects %s', (_, ua) => {
    expect(isBotRequest(ua)).toBe(true);
  });

  it('rejects a missing, empty or blank UA', () => {
    expect(isBotRequest(undefined)).toBe(true);
    expect(isBotRequest('')).toBe(true);
    expect(isBotRequest('   ')).toBe(true);
  });

  it('rejects a UA over 1000 characters and accepts one at 1000', () => {
    const chrome = BROWSERS[0][1];
    expect(isBotRequest(chrome.padEnd(1000, 'x'))).toBe(false);
    expect(isBotRequest(chrome.padEnd(1001, 'x'))).toBe(true);
  });

  it('rejects headless Chrome announced in Client Hints behind a spoofed UA', () => {
    const chrome = BROWSERS[0][1];
    expect(isBotRequest(chrome, { 'sec-ch-ua': '"Chromium";v="124", "HeadlessChrome";v="124", "Not-A.Brand";v="99"' })).toBe(true);
    expect(isBotRequest(chrome, { 'sec-ch-ua': '"Chromium";v="124", "Google Chrome";v="124", "Not-A.Brand";v="99"' })).toBe(false);
  });

  it('rejects requests carrying a From header, which only crawlers send', () => {
    expect(isBotRequest(BROWSERS[0][1], { from: 'bingbot(at)microsoft.com' })).toBe(true);
    expect(isBotRequest(BROWSERS[0][1], { 'accept-language': 'en-GB,en;q=0.9' })).toBe(false);
  });

  it('gives the same verdict from its cache', () => {
    expect(isBotRequest(BOTS[2][1])).toBe(true);
    expect(isBotRequest(BOTS[2][1])).toBe(true);
    expect(isBotRequest(BROWSERS[0][1])).toBe(false);
    expect(isBotRequest(BROWSERS[0][1])).toBe(false);
  });
});
