// Where a visit came from: the referrer's hostname, its channel (search, social, email, AI
// assistant, paid, referral, direct, internal) and a display name, from a bundled catalog of
// well-known hosts plus the campaign tags (utm_source, utm_medium) the page URL carried.
import { BoundedCache } from './cache.ts';

export type ReferrerChannel = 'direct' | 'internal' | 'search' | 'social' | 'email' | 'ai' | 'referral' | 'paid';

export interface ReferrerInfo {
  /** Normalised hostname (lower-case, "www." removed); '' when direct or internal. */
  referrer: string;
  referrer_source: ReferrerChannel;
  /** Catalog name (Google, ChatGPT, …), else the referrer hostname, else the utm_source; '' when direct. */
  source_name: string;
}

type Category = 'search' | 'social' | 'email' | 'ai';

interface Source {
  name: string;
  category: Category;
}

/**
 * The catalog. A host matches itself after "www." folding; a host written "*.example.com" also
 * matches every subdomain (m., l., out., old., …). Search engines are exact on purpose:
 * docs.google.com or accounts.google.com are not searches. Country domains of Google, Yandex and
 * Pinterest match by pattern (COUNTRY_PATTERNS below).
 */
const CATALOG: readonly [name: string, category: Category, hosts: readonly string[]][] = [
  // AI assistants: checked like every host, but listed first so subdomains of search engines
  // that host an assistant (gemini.google.com, edgeservices.bing.com) are found before them.
  ['ChatGPT', 'ai', ['*.chatgpt.com', 'chat.openai.com']],
  ['Perplexity', 'ai', ['*.perplexity.ai']],
  ['Claude', 'ai', ['claude.ai']],
  ['Gemini', 'ai', ['gemini.google.com', 'bard.google.com']],
  ['NotebookLM', 'ai', ['notebooklm.google.com']],
  ['Copilot', 'ai', ['copilot.microsoft.com', 'edgeservices.bing.com', 'copilot.cloud.microsoft']],
  ['Poe', 'ai', ['poe.com']],
  ['You.com', 'ai', ['you.com']],
  ['Phind', 'ai', ['phind.com']],
  ['Meta AI', 'ai', ['meta.ai']],
  ['Mistral', 'ai', ['chat.mistral.ai']],
  ['DeepSeek', 'ai', ['chat.deepseek.com']],
  ['Grok', 'ai', ['grok.com']],
  ['Kimi', 'ai', ['kimi.com', 'kimi.moonshot.cn']],
  ['Qwen', 'ai', ['chat.qwen.ai']],
  // Search engines
  ['Google', 'search', ['google.com']],
  ['Bing', 'search', ['bing.com', 'cn.bing.com']],
  ['DuckDuckGo', 'search', ['*.duckduckgo.com']],
  ['Yahoo', 'search', ['*.search.yahoo.com', 'yahoo.com', 'yahoo.co.jp']],
  ['Yandex', 'search', ['ya.ru']],
  ['Baidu', 'search', ['baidu.com', 'm.baidu.com']],
  ['Ecosia', 'search', ['ecosia.org']],
  ['Brave Search', 'search', ['search.brave.com']],
  ['Startpage', 'search', ['startpage.com', 'eu.startpage.com']],
  ['Qwant', 'search', ['qwant.com', 'lite.qwant.com']],
  ['Kagi', 'search', ['kagi.com']],
  ['Naver', 'search', ['naver.com', 'search.naver.com', 'm.search.naver.com']],
  ['Seznam', 'search', ['seznam.cz', 'search.seznam.cz']],
  ['Sogou', 'search', ['sogou.com', 'm.sogou.com']],
  ['Daum', 'search', ['daum.net', 'search.daum.net']],
  ['Ask', 'search', ['ask.com']],
  ['AOL', 'search', ['search.aol.com']],
  ['Mojeek', 'search', ['mojeek.com']],
  // Social networks and communities
  ['Facebook', 'social', ['*.facebook.com', 'fb.com', 'fb.me']],
  ['Instagram', 'social', ['*.instagram.com']],
  ['X', 'social', ['*.x.com', '*.twitter.com', 't.co']],
  ['LinkedIn', 'social', ['*.linkedin.com', 'lnkd.in']],
  ['Reddit', 'social', ['*.reddit.com', 'redd.it']],
  ['Hacker News', 'social', ['news.ycombinator.com']],
  ['YouTube', 'social', ['*.youtube.com', 'youtu.be']],
  ['TikTok', 'social', ['*.tiktok.com']],
  ['Pinterest', 'social', ['pin.it']],
  ['Threads', 'social', ['threads.net', 'threads.com']],
  ['Bluesky', 'social', ['bsky.app']],
  ['Mastodon', 'social', ['mastodon.social', 'mastodon.online', 'mstdn.social', 'fosstodon.org', 'hachyderm.io']],
  ['Lobsters', 'social', ['lobste.rs']],
  ['Product Hunt', 'social', ['producthunt.com']],
  ['Quora', 'social', ['*.quora.com']],
  ['Tumblr', 'social', ['*.tumblr.com']],
  ['Medium', 'social', ['medium.com']],
  ['VK', 'social', ['vk.com', 'm.vk.com']],
  ['Weibo', 'social', ['weibo.com', 'm.weibo.cn']],
  ['Xing', 'social', ['xing.com']],
  ['Snapchat', 'social', ['snapchat.com']],
  ['Telegram', 'social', ['t.me', 'web.telegram.org']],
  ['WhatsApp', 'social', ['whatsapp.com', 'web.whatsapp.com', 'wa.me']],
  ['Discord', 'social', ['discord.com', 'discordapp.com']],
  ['Slack', 'social', ['*.slack.com']],
  // Webmail
  ['Gmail', 'email', ['mail.google.com', 'inbox.google.com']],
  ['Outlook', 'email', ['outlook.live.com', 'outlook.office.com', 'outlook.office365.com', 'outlook.com']],
  ['Yahoo Mail', 'email', ['*.mail.yahoo.com']],
  ['Proton Mail', 'email', ['mail.proton.me', 'mail.protonmail.com']],
  ['iCloud Mail', 'email', ['icloud.com']],
  ['Fastmail', 'email', ['app.fastmail.com']],
  ['Zoho Mail', 'email', ['mail.zoho.com', 'mail.zoho.eu']],
  ['GMX', 'email', ['*.gmx.net', '*.gmx.com', '*.gmx.de']],
  ['Web.de', 'email', ['*.web.de']],
  ['Tuta', 'email', ['app.tuta.com', 'mail.tutanota.com']],
  ['AOL Mail', 'email', ['mail.aol.com']],
  ['Yandex Mail', 'email', ['mail.yandex.ru', 'mail.yandex.com']],
];

/** Where each catalog source lives (its first host), so the dashboard can show its icon. */
const HOME_HOSTS = new Map(CATALOG.map(([name, , hosts]) => [name, hosts[0].replace(/^\*\./, '')]));

/** The home host of a source the catalog names (Google → google.com); undefined for any other name. */
export const sourceHomeHost = (name: string): string | undefined => HOME_HOSTS.get(name);

/** Country domains (google.co.uk, google.de, yandex.com.tr, pinterest.fr, …), matched whole. */
const COUNTRY_PATTERNS: readonly [RegExp, string][] = [
  [/^google\.(?:com?\.)?[a-z]{2}$/, 'Google'],
  [/^yandex\.(?:com|(?:com?\.)?[a-z]{2})$/, 'Yandex'],
  [/^(?:[a-z]{2}\.)?pinterest\.(?:com|(?:com?\.)?[a-z]{2})$/, 'Pinterest'],
];

/** Android apps send "android-app://<package>/" as the referrer. */
const ANDROID_APPS: Readonly<Record<string, string>> = {
  'com.google.android.gm': 'Gmail',
  'com.google.android.googlequicksearchbox': 'Google',
  'com.microsoft.office.outlook': 'Outlook',
  'com.facebook.katana': 'Facebook',
  'com.instagram.android': 'Instagram',
  'com.twitter.android': 'X',
  'com.linkedin.android': 'LinkedIn',
  'com.reddit.frontpage': 'Reddit',
  'com.slack': 'Slack',
  'org.telegram.messenger': 'Telegram',
  'com.whatsapp': 'WhatsApp',
  'com.openai.chatgpt': 'ChatGPT',
  'ai.perplexity.app.android': 'Perplexity',
  'com.anthropic.claude': 'Claude',
  'com.google.android.apps.bard': 'Gemini',
  'com.microsoft.copilot': 'Copilot',
};

/** utm_source spellings that name a catalog source without being one of its hosts. */
const SOURCE_ALIASES: Readonly<Record<string, string>> = {
  fb: 'Facebook',
  ig: 'Instagram',
  twitter: 'X',
  tw: 'X',
  li: 'LinkedIn',
  hn: 'Hacker News',
  yt: 'YouTube',
  openai: 'ChatGPT',
  bard: 'Gemini',
  bingchat: 'Copilot',
  newsletter: 'Newsletter',
  email: 'Email',
  'e-mail': 'Email',
  mail: 'Email',
};

/** utm_medium values that decide the channel whatever the referrer (GA4's default grouping). */
const PAID_MEDIUM = /^(?:.*cp.*|ppc|retargeting|paid.*|display|banner|interstitial)$/i;
const EMAIL_MEDIUM = /^(?:e[-_ ]?mail|newsletter)$/i;
const SOCIAL_MEDIUM = /^(?:social|social[-_ ]?(?:network|media)|sm)$/i;

const byName = new Map<string, Source>();
/** Exact host → source, and whether subdomains of the host count too. */
const byHost = new Map<string, Source & { subdomains: boolean }>();
for (const [name, category, hosts] of CATALOG) {
  const source = { name, category };
  byName.set(name, source);
  for (const host of hosts) {
    const wildcard = host.startsWith('*.');
    byHost.set(wildcard ? host.slice(2) : host, { ...source, subdomains: wildcard });
  }
}
byName.set('Newsletter', { name: 'Newsletter', category: 'email' });
byName.set('Email', { name: 'Email', category: 'email' });
for (const [pattern, name] of COUNTRY_PATTERNS) if (!byName.has(name)) throw new Error(`referrer catalog: no source ${name} for ${pattern}`);
/** utm_source by lower-case name too: "google", "chatgpt", "hacker news", "hackernews". */
const byAlias = new Map<string, Source>();
for (const [name, source] of byName) {
  byAlias.set(name.toLowerCase(), source);
  byAlias.set(name.toLowerCase().replace(/[\s.]/g, ''), source);
}
for (const [alias, name] of Object.entries(SOURCE_ALIASES)) byAlias.set(alias, byName.get(name)!);

const foldWww = (host: string) => (host.startsWith('www.') ? host.slice(4) : host);

function sourceOfHost(host: string): Source | undefined {
  const exact = byHost.get(host);
  if (exact) return exact;
  for (const [pattern, name] of COUNTRY_PATTERNS) if (pattern.test(host)) return byName.get(name);
  for (let dot = host.indexOf('.'); dot !== -1; dot = host.indexOf('.', dot + 1)) {
    const parent = byHost.get(host.slice(dot + 1));
    if (parent?.subdomains) return parent;
  }
  return undefined;
}

/** Referrers seen, by their text: most of a site's visits come from the same few (referrers of up to 512 characters). */
const referrerHosts = new BoundedCache<Readonly<{ host: string; app: boolean }> | null>(2000, 512);

/** Hostname (or Android package) of a referrer, normalised; null for anything unusable. */
function referrerHost(referrer: string): Readonly<{ host: string; app: boolean }> | null {
  return referrerHosts.getOrMake(referrer, parseReferrerHost);
}

/** Frozen: the answer is shared by every later call for the same referrer. */
function parseReferrerHost(referrer: string): Readonly<{ host: string; app: boolean }> | null {
  let url: URL;
  try {
    url = new URL(referrer.trim());
  } catch {
    return null;
  }
  if (url.protocol === 'android-app:') return url.hostname ? Object.freeze({ host: url.hostname.toLowerCase(), app: true }) : null;
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return null;
  let host = url.hostname;
  if (host.endsWith('.')) host = host.slice(0, -1);
  return host ? Object.freeze({ host: foldWww(host), app: false }) : null;
}

function sourceOfUtm(utmSource: string): Source | undefined {
  let value = utmSource.trim().toLowerCase();
  if (value === '') return undefined;
  if (value.includes('://')) value = referrerHost(value)?.host ?? value;
  return byAlias.get(value) ?? sourceOfHost(foldWww(value));
}

function mediumChannel(medium: string): ReferrerChannel | null {
  const value = medium.trim();
  if (value === '') return null;
  if (PAID_MEDIUM.test(value)) return 'paid';
  if (EMAIL_MEDIUM.test(value)) return 'email';
  if (SOCIAL_MEDIUM.test(value)) return 'social';
  return null;
}

/**
 * Classifies one visit's origin. A referrer on the page's own host (after www. folding) is
 * internal navigation and wins over everything. Otherwise the channel comes from utm_medium when
 * it says paid, email or social; else from the referrer's catalog entry; else from a utm_source
 * the catalog knows (ChatGPT tags its links utm_source=chatgpt.com and apps often send no
 * referrer); else any other referrer or utm_source is a referral, and nothing at all is direct.
 * Never throws, whatever the strings.
 */
export function classifyReferrer(referrer: string | undefined, pageHostname: string, utmSource?: string, utmMedium?: string): ReferrerInfo {
  let refHost = '';
  let source: Source | undefined;
  if (referrer) {
    const parsed = referrerHost(referrer);
    if (parsed !== null) {
      if (!parsed.app && parsed.host === foldWww(pageHostname.toLowerCase())) {
        return { referrer: '', referrer_source: 'internal', source_name: '' };
      }
      refHost = parsed.host;
      source = parsed.app ? byName.get(ANDROID_APPS[refHost] ?? '') : sourceOfHost(refHost);
    }
  }
  const utm = utmSource?.trim() ?? '';
  if (source === undefined && utm !== '') source = sourceOfUtm(utm);
  const medium = utmMedium ? mediumChannel(utmMedium) : null;
  const channel: ReferrerChannel = medium ?? source?.category ?? (refHost !== '' || utm !== '' ? 'referral' : 'direct');
  return { referrer: refHost, referrer_source: channel, source_name: source?.name ?? (refHost || utm) };
}
