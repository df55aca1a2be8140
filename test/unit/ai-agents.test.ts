// matchAiAgent: the bundled catalog of AI crawlers, assistants and agents, matched on real UAs.
import { describe, expect, it } from '@jest/globals';
import { AI_AGENTS, matchAiAgent } from '../../lib/ingest/enrich/ai-agents.ts';

/** [user agent as seen in server logs, name, family, category] */
const CASES: [string, string, string, string][] = [
  ['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)', 'GPTBot', 'OpenAI', 'training crawler'],
  ['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; OAI-SearchBot/1.0; +https://openai.com/searchbot)', 'OAI-SearchBot', 'OpenAI', 'search indexer'],
  ['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot', 'ChatGPT-User', 'OpenAI', 'assistant'],
  ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36 ChatGPT-Agent/1.0', 'ChatGPT Agent', 'OpenAI', 'agent'],
  ['Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 OpenAI-Operator', 'ChatGPT Agent', 'OpenAI', 'agent'],
  ['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)', 'ClaudeBot', 'Anthropic', 'training crawler'],
  ['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Claude-User/1.0; +Claude-User@anthropic.com)', 'Claude-User', 'Anthropic', 'assistant'],
  ['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Claude-SearchBot/1.0; +Claude-SearchBot@anthropic.com)', 'Claude-SearchBot', 'Anthropic', 'search indexer'],
  ['Mozilla/5.0 (compatible; anthropic-ai/1.0; +http://www.anthropic.com/bot.html)', 'anthropic-ai', 'Anthropic', 'training crawler'],
  ['Mozilla/5.0 (compatible; Claude-Web/1.0; +http://www.anthropic.com/bot.html)', 'Claude-Web', 'Anthropic', 'other'],
  ['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; PerplexityBot/1.0; +https://perplexity.ai/perplexitybot)', 'PerplexityBot', 'Perplexity', 'search indexer'],
  ['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Perplexity-User/1.0; +https://perplexity.ai/perplexity-user)', 'Perplexity-User', 'Perplexity', 'assistant'],
  ['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Google-CloudVertexBot; +https://cloud.google.com/enterprise-search)', 'Google-CloudVertexBot', 'Google', 'search indexer'],
  ['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Gemini-Deep-Research; +https://gemini.google/overview/deep-research/) Chrome/135.0.0.0 Safari/537.36', 'Gemini-Deep-Research', 'Google', 'assistant'],
  ['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GoogleOther) Chrome/124.0.6367.118 Safari/537.36', 'GoogleOther', 'Google', 'other'],
  ['Mozilla/5.0 (Linux; Android 5.0) AppleWebKit/537.36 (KHTML, like Gecko) Mobile Safari/537.36 (compatible; Bytespider; spider-feedback@bytedance.com)', 'Bytespider', 'ByteDance', 'training crawler'],
  ['CCBot/2.0 (https://commoncrawl.org/faq/)', 'CCBot', 'Common Crawl', 'training crawler'],
  ['Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/600.2.5 (KHTML, like Gecko) Version/8.0.2 Safari/600.2.5 (Amazonbot/0.1; +https://developer.amazon.com/support/amazonbot)', 'Amazonbot', 'Amazon', 'search indexer'],
  ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/134.0.0.0 Safari/537.36 NovaAct', 'NovaAct', 'Amazon', 'agent'],
  ['Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/13.1.1 Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)', 'Applebot', 'Apple', 'search indexer'],
  ['Applebot-Extended', 'Applebot-Extended', 'Apple', 'training crawler'],
  ['meta-externalagent/1.1 (+https://developers.facebook.com/docs/sharing/webmasters/crawler)', 'meta-externalagent', 'Meta', 'training crawler'],
  ['meta-externalfetcher/1.1 (+https://developers.facebook.com/docs/sharing/webmasters/crawler)', 'meta-externalfetcher', 'Meta', 'assistant'],
  ['Mozilla/5.0 (compatible; FacebookBot/1.0; +https://developers.facebook.com/docs/sharing/webmasters/facebookbot/)', 'FacebookBot', 'Meta', 'training crawler'],
  ['cohere-ai', 'cohere-ai', 'Cohere', 'assistant'],
  ['cohere-training-data-crawler', 'cohere-training-data-crawler', 'Cohere', 'training crawler'],
  ['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; MistralAI-User/1.0; +https://docs.mistral.ai/robots)', 'MistralAI-User', 'Mistral', 'assistant'],
  ['DuckAssistBot/1.2; (+http://duckduckgo.com/duckassistbot.html)', 'DuckAssistBot', 'DuckDuckGo', 'assistant'],
  ['Mozilla/5.0 (compatible; YouBot (+http://www.you.com))', 'YouBot', 'You.com', 'search indexer'],
  ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/116.0.0.0 Safari/537.36 (compatible; Diffbot/0.1; +http://www.diffbot.com)', 'Diffbot', 'Diffbot', 'other'],
  ['Mozilla/5.0 (Linux; Android 7.0;) AppleWebKit/537.36 (KHTML, like Gecko) Mobile Safari/537.36 (compatible; PetalBot;+https://webmaster.petalsearch.com/site/petalbot)', 'PetalBot', 'Huawei', 'search indexer'],
  ['Timpibot/0.9 (+http://www.timpi.io)', 'Timpibot', 'Timpi', 'training crawler'],
  ['Mozilla/5.0 (compatible; ImagesiftBot; +imagesift.com)', 'ImagesiftBot', 'ImageSift', 'other'],
  ['Mozilla/5.0 (compatible; Kangaroo Bot/1.0; +https://kangaroollm.com.au/kangaroo-bot/)', 'Kangaroo Bot', 'Kangaroo LLM', 'training crawler'],
  ['Mozilla/5.0 (compatible) AI2Bot (+https://www.allenai.org/crawler)', 'AI2Bot', 'Allen AI', 'training crawler'],
  ['omgili/0.5 +http://omgili.com', 'omgili', 'Webz.io', 'other'],
  ['Mozilla/5.0 (compatible; PanguBot;+https://www.huaweicloud.com/pangubot)', 'PanguBot', 'Huawei', 'training crawler'],
  ['Webzio-Extended', 'Webzio-Extended', 'Webz.io', 'training crawler'],
];

describe('matchAiAgent', () => {
  it.each(CASES)('%s → %s', (ua, name, family, category) => {
    expect(matchAiAgent(ua)).toEqual({ name, family, category });
  });

  it('matches tokens case-insensitively', () => {
    expect(matchAiAgent('gptbot/1.0')).toEqual({ name: 'GPTBot', family: 'OpenAI', category: 'training crawler' });
    expect(matchAiAgent('Mozilla/5.0 (compatible; CLAUDEBOT/1.0)')?.name).toBe('ClaudeBot');
  });

  it('lets the more specific token win over the one it extends', () => {
    expect(matchAiAgent('Mozilla/5.0 (compatible; Applebot-Extended/0.1)')?.name).toBe('Applebot-Extended');
    expect(matchAiAgent('Claude-SearchBot/1.0 ClaudeBot/1.0')?.name).toBe('Claude-SearchBot');
    expect(matchAiAgent('cohere-training-data-crawler cohere-ai')?.name).toBe('cohere-training-data-crawler');
  });

  it('answers null for search engine crawlers, link previews and browsers', () => {
    expect(matchAiAgent('Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.6367.118 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)')).toBeNull();
    expect(matchAiAgent('Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm) Chrome/116.0.1938.76 Safari/537.36')).toBeNull();
    expect(matchAiAgent('facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)')).toBeNull();
    expect(matchAiAgent('Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36')).toBeNull();
    expect(matchAiAgent('curl/8.5.0')).toBeNull();
    expect(matchAiAgent('')).toBeNull();
  });

  it('does not match a token inside a longer word', () => {
    expect(matchAiAgent('Mozilla/5.0 (compatible; MyGPTBotanist/1.0)')).toBeNull();
    expect(matchAiAgent('NotCCBot/1.0')).toBeNull();
  });

  it('answers the same from its cache', () => {
    const ua = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)';
    expect(matchAiAgent(ua)).toBe(matchAiAgent(ua));
  });

  it('exposes the catalog with one pattern per entry and no duplicate names', () => {
    expect(AI_AGENTS.length).toBeGreaterThanOrEqual(40);
    expect(new Set(AI_AGENTS.map((agent) => agent.name)).size).toBe(AI_AGENTS.length);
    for (const agent of AI_AGENTS) expect(agent.pattern.flags).toContain('i');
  });
});
