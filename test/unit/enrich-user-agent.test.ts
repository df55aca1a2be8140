// parseUserAgent: browser, OS (normalised names, short versions) and device class, from real
// User-Agent strings; the viewport decides the device only when the UA cannot.
import { describe, expect, it } from '@jest/globals';
import { parseUserAgent } from '../../lib/ingest/enrich/user-agent.ts';

const UA = {
  chromeWindows: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  edgeWindows: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 Edg/124.0.2478.51',
  firefoxWindows: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:125.0) Gecko/20100101 Firefox/125.0',
  operaWindows: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/123.0.0.0 Safari/537.36 OPR/109.0.0.0',
  chromeWindows7: 'Mozilla/5.0 (Windows NT 6.1; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/109.0.0.0 Safari/537.36',
  ie11: 'Mozilla/5.0 (Windows NT 6.1; WOW64; Trident/7.0; rv:11.0) like Gecko',
  yandex: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/122.0.0.0 YaBrowser/24.4.0.0 Safari/537.36',
  safariMac: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15',
  chromeMac: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  firefoxUbuntu: 'Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0',
  chromeOS: 'Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  safariIphone:
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4.1 Mobile/15E148 Safari/604.1',
  chromeIphone:
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/124.0.6367.88 Mobile/15E148 Safari/604.1',
  safariIpad: 'Mozilla/5.0 (iPad; CPU OS 16_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.6 Mobile/15E148 Safari/604.1',
  samsungInternet:
    'Mozilla/5.0 (Linux; Android 13; SM-S911B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/24.0 Chrome/117.0.0.0 Mobile Safari/537.36',
  firefoxAndroid: 'Mozilla/5.0 (Android 14; Mobile; rv:125.0) Gecko/125.0 Firefox/125.0',
  chromeAndroid: 'Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.6367.82 Mobile Safari/537.36',
  chromeAndroidTablet: 'Mozilla/5.0 (Linux; Android 13; SM-X700) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  androidWebView:
    'Mozilla/5.0 (Linux; Android 13; Pixel 7 Build/TQ3A.230805.001; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/116.0.0.0 Mobile Safari/537.36',
  ucBrowser:
    'Mozilla/5.0 (Linux; U; Android 10; en-US; RMX2020 Build/QP1A.190711.020) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/78.0.3904.108 UCBrowser/13.4.0.1306 Mobile Safari/537.36',
  headlessChrome: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/124.0.6367.60 Safari/537.36',
  playstation5: 'Mozilla/5.0 (PlayStation; PlayStation 5/2.26) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/13.0 Safari/605.1.15',
  curl: 'curl/8.5.0',
};

describe('parseUserAgent', () => {
  it('reads desktop browsers on Windows', () => {
    expect(parseUserAgent(UA.chromeWindows)).toEqual({ browser: 'Chrome', browser_version: '124', os: 'Windows', os_version: '10', device: 'desktop' });
    expect(parseUserAgent(UA.edgeWindows)).toEqual({ browser: 'Edge', browser_version: '124', os: 'Windows', os_version: '10', device: 'desktop' });
    expect(parseUserAgent(UA.firefoxWindows)).toEqual({ browser: 'Firefox', browser_version: '125', os: 'Windows', os_version: '10', device: 'desktop' });
    expect(parseUserAgent(UA.operaWindows)).toEqual({ browser: 'Opera', browser_version: '109', os: 'Windows', os_version: '10', device: 'desktop' });
    expect(parseUserAgent(UA.chromeWindows7)).toEqual({ browser: 'Chrome', browser_version: '109', os: 'Windows', os_version: '7', device: 'desktop' });
  });

  it('normalises product names: Internet Explorer, Yandex Browser, UC Browser, Android WebView', () => {
    expect(parseUserAgent(UA.ie11)).toEqual({ browser: 'Internet Explorer', browser_version: '11', os: 'Windows', os_version: '7', device: 'desktop' });
    expect(parseUserAgent(UA.yandex).browser).toBe('Yandex Browser');
    expect(parseUserAgent(UA.ucBrowser)).toEqual({ browser: 'UC Browser', browser_version: '13', os: 'Android', os_version: '10', device: 'mobile' });
    expect(parseUserAgent(UA.androidWebView)).toEqual({ browser: 'Android WebView', browser_version: '116', os: 'Android', os_version: '13', device: 'mobile' });
  });

  it('calls Mac OS X macOS, keeps major.minor, and folds Linux distributions into Linux', () => {
    expect(parseUserAgent(UA.safariMac)).toEqual({ browser: 'Safari', browser_version: '17', os: 'macOS', os_version: '10.15', device: 'desktop' });
    expect(parseUserAgent(UA.chromeMac)).toEqual({ browser: 'Chrome', browser_version: '124', os: 'macOS', os_version: '10.15', device: 'desktop' });
    expect(parseUserAgent(UA.firefoxUbuntu)).toEqual({ browser: 'Firefox', browser_version: '125', os: 'Linux', os_version: '', device: 'desktop' });
    expect(parseUserAgent(UA.chromeOS)).toEqual({ browser: 'Chrome', browser_version: '124', os: 'ChromeOS', os_version: '14541', device: 'desktop' });
  });

  it('folds Mobile Safari into Safari; the device says mobile', () => {
    expect(parseUserAgent(UA.safariIphone)).toEqual({ browser: 'Safari', browser_version: '17', os: 'iOS', os_version: '17.4', device: 'mobile' });
    expect(parseUserAgent(UA.chromeIphone)).toEqual({ browser: 'Chrome', browser_version: '124', os: 'iOS', os_version: '17.4', device: 'mobile' });
  });

  it('knows an iPad and an Android tablet are tablets', () => {
    expect(parseUserAgent(UA.safariIpad)).toEqual({ browser: 'Safari', browser_version: '16', os: 'iOS', os_version: '16.6', device: 'tablet' });
    expect(parseUserAgent(UA.chromeAndroidTablet)).toEqual({ browser: 'Chrome', browser_version: '124', os: 'Android', os_version: '13', device: 'tablet' });
  });

  it('reads Android phones: Samsung Internet, Firefox, Chrome', () => {
    expect(parseUserAgent(UA.samsungInternet)).toEqual({
      browser: 'Samsung Internet',
      browser_version: '24',
      os: 'Android',
      os_version: '13',
      device: 'mobile',
    });
    expect(parseUserAgent(UA.firefoxAndroid)).toEqual({ browser: 'Firefox', browser_version: '125', os: 'Android', os_version: '14', device: 'mobile' });
    expect(parseUserAgent(UA.chromeAndroid)).toEqual({ browser: 'Chrome', browser_version: '124', os: 'Android', os_version: '10', device: 'mobile' });
  });

  it('lets the UA win over the viewport when it names the device or a desktop OS', () => {
    expect(parseUserAgent(UA.safariIphone, 1400).device).toBe('mobile');
    expect(parseUserAgent(UA.safariIpad, 400).device).toBe('tablet');
    expect(parseUserAgent(UA.chromeWindows, 500).device).toBe('desktop');
    // A Mac window narrowed beside another is still a desktop (iPadOS's Mac UA is counted so too).
    expect(parseUserAgent(UA.safariMac, 700).device).toBe('desktop');
  });

  it('uses the viewport when the UA names neither device nor OS: < 768 mobile, < 1024 tablet', () => {
    expect(parseUserAgent(UA.curl, 390).device).toBe('mobile');
    expect(parseUserAgent(UA.curl, 767).device).toBe('mobile');
    expect(parseUserAgent(UA.curl, 768).device).toBe('tablet');
    expect(parseUserAgent(UA.curl, 1023).device).toBe('tablet');
    expect(parseUserAgent(UA.curl, 1024).device).toBe('desktop');
    expect(parseUserAgent(UA.curl).device).toBe('desktop');
    expect(parseUserAgent(UA.curl, 0).device).toBe('desktop');
  });

  it('counts consoles as desktop and names headless Chrome Chrome (the bot filter drops it)', () => {
    expect(parseUserAgent(UA.playstation5)).toEqual({ browser: 'Safari', browser_version: '13', os: 'PlayStation', os_version: '5', device: 'desktop' });
    expect(parseUserAgent(UA.headlessChrome)).toEqual({ browser: 'Chrome', browser_version: '124', os: 'Linux', os_version: '', device: 'desktop' });
  });

  it('answers empty strings for what it cannot tell', () => {
    expect(parseUserAgent(UA.curl)).toEqual({ browser: '', browser_version: '', os: '', os_version: '', device: 'desktop' });
    expect(parseUserAgent('')).toEqual({ browser: '', browser_version: '', os: '', os_version: '', device: 'desktop' });
    expect(parseUserAgent('\u0000\uffff garbage (((')).toEqual({ browser: '', browser_version: '', os: '', os_version: '', device: 'desktop' });
  });

  it('gives the same answer from its cache as on first parse, with the viewport applied per call', () => {
    const ua = 'Mozilla/5.0 (compatible; UnknownThing/1.0)';
    expect(parseUserAgent(ua, 400).device).toBe('mobile');
    expect(parseUserAgent(ua, 1200).device).toBe('desktop');
    expect(parseUserAgent(UA.chromeWindows)).toEqual(parseUserAgent(UA.chromeWindows));
  });

  it('copes with an absurdly long UA', () => {
    const long = `${UA.chromeWindows} ${'x'.repeat(5000)}`;
    expect(parseUserAgent(long).browser).toBe('Chrome');
  });
});
