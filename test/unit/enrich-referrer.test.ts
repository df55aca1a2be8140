// classifyReferrer: referrer hostname, channel and source name from the bundled catalog and the
// campaign tags; garbage never throws.
import { describe, expect, it } from '@jest/globals';
import { classifyReferrer } from '../../lib/ingest/enrich/referrer.ts';

const page = 'example.com';

describe('classifyReferrer', () => {
  it('calls no referrer and no campaign direct', () => {
    expect(classifyReferrer(undefined, page)).toEqual({ referrer: '', referrer_source: 'direct', source_name: '' });
    expect(classifyReferrer('', page)).toEqual({ referrer: '', referrer_source: 'direct', source_name: '' });
  });

  it('calls the page’s own host internal, after www. folding, and drops the referrer', () => {
    expect(classifyReferrer('https://example.com/pricing', page)).toEqual({ referrer: '', referrer_source: 'internal', source_name: '' });
    expect(classifyReferrer('https://WWW.Example.com/', page)).toEqual({ referrer: '', referrer_source: 'internal', source_name: '' });
    expect(classifyReferrer('http://example.com:8080/a', 'www.example.com')).toEqual({ referrer: '', referrer_source: 'internal', source_name: '' });
    expect(classifyReferrer('https://example.com/', page, 'chatgpt.com', 'cpc')).toEqual({ referrer: '', referrer_source: 'internal', source_name: '' });
  });

  it('treats another subdomain of the site as a referral (same host only, kept simple)', () => {
    expect(classifyReferrer('https://blog.example.com/post', page)).toEqual({ referrer: 'blog.example.com', referrer_source: 'referral', source_name: 'blog.example.com' });
  });

  it('knows search engines, including Google’s country domains', () => {
    expect(classifyReferrer('https://www.google.com/', page)).toEqual({ referrer: 'google.com', referrer_source: 'search', source_name: 'Google' });
    expect(classifyReferrer('https://www.google.co.uk/', page)).toEqual({ referrer: 'google.co.uk', referrer_source: 'search', source_name: 'Google' });
    expect(classifyReferrer('https://www.google.com.au/search?q=x', page)).toEqual({ referrer: 'google.com.au', referrer_source: 'search', source_name: 'Google' });
    expect(classifyReferrer('https://www.google.de/', page)).toEqual({ referrer: 'google.de', referrer_source: 'search', source_name: 'Google' });
    expect(classifyReferrer('https://www.bing.com/search?q=plumb', page)).toEqual({ referrer: 'bing.com', referrer_source: 'search', source_name: 'Bing' });
    expect(classifyReferrer('https://duckduckgo.com/', page)).toEqual({ referrer: 'duckduckgo.com', referrer_source: 'search', source_name: 'DuckDuckGo' });
    expect(classifyReferrer('https://html.duckduckgo.com/html/', page)).toEqual({ referrer: 'html.duckduckgo.com', referrer_source: 'search', source_name: 'DuckDuckGo' });
    expect(classifyReferrer('https://uk.search.yahoo.com/', page)).toEqual({ referrer: 'uk.search.yahoo.com', referrer_source: 'search', source_name: 'Yahoo' });
    expect(classifyReferrer('https://yandex.ru/', page)).toEqual({ referrer: 'yandex.ru', referrer_source: 'search', source_name: 'Yandex' });
    expect(classifyReferrer('https://www.ecosia.org/', page)).toEqual({ referrer: 'ecosia.org', referrer_source: 'search', source_name: 'Ecosia' });
    expect(classifyReferrer('https://search.brave.com/', page)).toEqual({ referrer: 'search.brave.com', referrer_source: 'search', source_name: 'Brave Search' });
  });

  it('does not take every google.com subdomain for a search', () => {
    expect(classifyReferrer('https://docs.google.com/document/d/1', page)).toEqual({ referrer: 'docs.google.com', referrer_source: 'referral', source_name: 'docs.google.com' });
  });

  it('knows social networks and their link shorteners and subdomains', () => {
    expect(classifyReferrer('https://l.facebook.com/l.php?u=x', page)).toEqual({ referrer: 'l.facebook.com', referrer_source: 'social', source_name: 'Facebook' });
    expect(classifyReferrer('https://m.facebook.com/', page)).toEqual({ referrer: 'm.facebook.com', referrer_source: 'social', source_name: 'Facebook' });
    expect(classifyReferrer('https://t.co/abc', page)).toEqual({ referrer: 't.co', referrer_source: 'social', source_name: 'X' });
    expect(classifyReferrer('https://twitter.com/', page)).toEqual({ referrer: 'twitter.com', referrer_source: 'social', source_name: 'X' });
    expect(classifyReferrer('https://x.com/someone', page)).toEqual({ referrer: 'x.com', referrer_source: 'social', source_name: 'X' });
    expect(classifyReferrer('https://www.linkedin.com/feed/', page)).toEqual({ referrer: 'linkedin.com', referrer_source: 'social', source_name: 'LinkedIn' });
    expect(classifyReferrer('https://old.reddit.com/r/selfhosted', page)).toEqual({ referrer: 'old.reddit.com', referrer_source: 'social', source_name: 'Reddit' });
    expect(classifyReferrer('https://news.ycombinator.com/item?id=1', page)).toEqual({ referrer: 'news.ycombinator.com', referrer_source: 'social', source_name: 'Hacker News' });
    expect(classifyReferrer('https://uk.pinterest.com/', page)).toEqual({ referrer: 'uk.pinterest.com', referrer_source: 'social', source_name: 'Pinterest' });
    expect(classifyReferrer('https://bsky.app/profile/x', page)).toEqual({ referrer: 'bsky.app', referrer_source: 'social', source_name: 'Bluesky' });
  });

  it('knows webmail', () => {
    expect(classifyReferrer('https://mail.google.com/', page)).toEqual({ referrer: 'mail.google.com', referrer_source: 'email', source_name: 'Gmail' });
    expect(classifyReferrer('https://outlook.live.com/', page)).toEqual({ referrer: 'outlook.live.com', referrer_source: 'email', source_name: 'Outlook' });
    expect(classifyReferrer('https://outlook.office.com/mail/', page)).toEqual({ referrer: 'outlook.office.com', referrer_source: 'email', source_name: 'Outlook' });
  });

  it('knows AI assistants, before the search engines that host some of them', () => {
    const cases: [string, string, string][] = [
      ['https://chatgpt.com/', 'chatgpt.com', 'ChatGPT'],
      ['https://chat.openai.com/c/123', 'chat.openai.com', 'ChatGPT'],
      ['https://www.perplexity.ai/search?q=x', 'perplexity.ai', 'Perplexity'],
      ['https://claude.ai/chat/1', 'claude.ai', 'Claude'],
      ['https://gemini.google.com/app', 'gemini.google.com', 'Gemini'],
      ['https://bard.google.com/', 'bard.google.com', 'Gemini'],
      ['https://copilot.microsoft.com/', 'copilot.microsoft.com', 'Copilot'],
      ['https://edgeservices.bing.com/edgesvc/chat', 'edgeservices.bing.com', 'Copilot'],
      ['https://poe.com/', 'poe.com', 'Poe'],
      ['https://you.com/search?q=x', 'you.com', 'You.com'],
      ['https://www.phind.com/search', 'phind.com', 'Phind'],
      ['https://www.meta.ai/', 'meta.ai', 'Meta AI'],
      ['https://chat.mistral.ai/chat', 'chat.mistral.ai', 'Mistral'],
      ['https://chat.deepseek.com/', 'chat.deepseek.com', 'DeepSeek'],
      ['https://grok.com/', 'grok.com', 'Grok'],
    ];
    for (const [url, host, name] of cases) {
      expect(classifyReferrer(url, page)).toEqual({ referrer: host, referrer_source: 'ai', source_name: name });
    }
  });

  it('calls unknown hosts referrals named by their hostname', () => {
    expect(classifyReferrer('https://www.Some-Blog.net/2024/post?x=1', page)).toEqual({ referrer: 'some-blog.net', referrer_source: 'referral', source_name: 'some-blog.net' });
    expect(classifyReferrer('http://203.0.113.9/', page)).toEqual({ referrer: '203.0.113.9', referrer_source: 'referral', source_name: '203.0.113.9' });
  });

  it('reads Android app referrers', () => {
    expect(classifyReferrer('android-app://com.google.android.gm/', page)).toEqual({ referrer: 'com.google.android.gm', referrer_source: 'email', source_name: 'Gmail' });
    expect(classifyReferrer('android-app://com.openai.chatgpt/', page)).toEqual({ referrer: 'com.openai.chatgpt', referrer_source: 'ai', source_name: 'ChatGPT' });
    expect(classifyReferrer('android-app://org.example.reader/', page)).toEqual({ referrer: 'org.example.reader', referrer_source: 'referral', source_name: 'org.example.reader' });
  });

  it('classifies from utm_source when there is no referrer', () => {
    expect(classifyReferrer(undefined, page, 'chatgpt.com')).toEqual({ referrer: '', referrer_source: 'ai', source_name: 'ChatGPT' });
    expect(classifyReferrer(undefined, page, 'perplexity')).toEqual({ referrer: '', referrer_source: 'ai', source_name: 'Perplexity' });
    expect(classifyReferrer(undefined, page, 'newsletter')).toEqual({ referrer: '', referrer_source: 'email', source_name: 'Newsletter' });
    expect(classifyReferrer(undefined, page, 'email')).toEqual({ referrer: '', referrer_source: 'email', source_name: 'Email' });
    expect(classifyReferrer(undefined, page, 'Facebook')).toEqual({ referrer: '', referrer_source: 'social', source_name: 'Facebook' });
    expect(classifyReferrer(undefined, page, 'fb')).toEqual({ referrer: '', referrer_source: 'social', source_name: 'Facebook' });
    expect(classifyReferrer(undefined, page, 'hackernews')).toEqual({ referrer: '', referrer_source: 'social', source_name: 'Hacker News' });
    expect(classifyReferrer(undefined, page, 'https://www.google.com/')).toEqual({ referrer: '', referrer_source: 'search', source_name: 'Google' });
  });

  it('calls an unknown utm_source a referral named as tagged', () => {
    expect(classifyReferrer(undefined, page, 'partner-site')).toEqual({ referrer: '', referrer_source: 'referral', source_name: 'partner-site' });
  });

  it('prefers a catalog referrer over utm_source, and a catalog utm_source over an unknown referrer', () => {
    expect(classifyReferrer('https://www.google.com/', page, 'newsletter')).toEqual({ referrer: 'google.com', referrer_source: 'search', source_name: 'Google' });
    expect(classifyReferrer('https://some-blog.net/', page, 'chatgpt.com')).toEqual({ referrer: 'some-blog.net', referrer_source: 'ai', source_name: 'ChatGPT' });
  });

  it('lets utm_medium decide paid, email and social', () => {
    expect(classifyReferrer('https://www.google.com/', page, 'google', 'cpc')).toEqual({ referrer: 'google.com', referrer_source: 'paid', source_name: 'Google' });
    expect(classifyReferrer(undefined, page, 'facebook', 'paid_social')).toEqual({ referrer: '', referrer_source: 'paid', source_name: 'Facebook' });
    expect(classifyReferrer(undefined, page, 'partner', 'ppc')).toEqual({ referrer: '', referrer_source: 'paid', source_name: 'partner' });
    expect(classifyReferrer(undefined, page, 'spring-digest', 'email')).toEqual({ referrer: '', referrer_source: 'email', source_name: 'spring-digest' });
    expect(classifyReferrer(undefined, page, undefined, 'E-Mail')).toEqual({ referrer: '', referrer_source: 'email', source_name: '' });
    expect(classifyReferrer('https://some-blog.net/', page, undefined, 'social')).toEqual({ referrer: 'some-blog.net', referrer_source: 'social', source_name: 'some-blog.net' });
    expect(classifyReferrer(undefined, page, 'chatgpt.com', 'referral')).toEqual({ referrer: '', referrer_source: 'ai', source_name: 'ChatGPT' });
  });

  it('never throws on garbage; unusable referrers count as absent', () => {
    const garbage = ['not a url', '://', 'javascript:alert(1)', 'data:text/html,hi', 'http://', 'https://[::1', '\u0000\uffff', 'x'.repeat(5000), 'about:blank'];
    for (const referrer of garbage) {
      expect(classifyReferrer(referrer, page)).toEqual({ referrer: '', referrer_source: 'direct', source_name: '' });
    }
    expect(classifyReferrer('__proto__', page, '__proto__', 'constructor')).toEqual({ referrer: '', referrer_source: 'referral', source_name: '__proto__' });
    expect(classifyReferrer('android-app://constructor/', page)).toEqual({ referrer: 'constructor', referrer_source: 'referral', source_name: 'constructor' });
  });
});
