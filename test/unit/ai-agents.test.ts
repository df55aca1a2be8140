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
  // Further agents of ai-robots-txt and crawler-user-agents: the lists' own instances where they give
  // one, otherwise the agent's token in the usual "compatible" form
  ['Mozilla/5.0 (compatible; AddSearchBot/0.9; +http://www.addsearch.com/bot; info@addsearch.com)', 'AddSearchBot', 'AddSearch', 'search indexer'],
  ['AwarioSmartBot/1.0 (+https://awario.com/bots.html; bots@awario.com)', 'Awario', 'Awario', 'other'],
  ['VelenPublicWebCrawler (velen.io)', 'VelenPublicWebCrawler', 'Velen', 'training crawler'],
  ['Mozilla/5.0 (compatible;PetalBot;+https://webmaster.petalsearch.com/site/petalbot)', 'PetalBot', 'Huawei', 'search indexer'],
  ['Mozilla/5.0 (iPhone; CPU iPhone OS 11_0 like Mac OS X) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/43.0.7597.1164 Mobile Safari/537.36; Bytespider;bytespider@bytedance.com', 'Bytespider', 'ByteDance', 'training crawler'],
  ['Mozilla/5.0 (compatible; Google-CloudVertexBot; +https://cloud.google.com/enterprise-search)', 'Google-CloudVertexBot', 'Google', 'search indexer'],
  ['Mozilla/5.0 (compatible; CloudVertexBot/1.0)', 'Google-CloudVertexBot', 'Google', 'search indexer'],
  ['GoogleOther-Image/1.0', 'GoogleOther', 'Google', 'other'],
  ['Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Google-Agent; +https://developers.google.com/search/docs/crawling-indexing/google-common-crawlers) Chrome/136.0.0.0 Safari/537.36', 'Google-Agent', 'Google', 'agent'],
  ['Mozilla/5.0 (compatible; GoogleAgent-URLContext/1.0)', 'GoogleAgent-URLContext', 'Google', 'assistant'],
  ['Mozilla/5.0 (compatible; Google-Gemini-CLI/0.1.5)', 'Google-Gemini-CLI', 'Google', 'agent'],
  ['Mozilla/5.0 (compatible; NotebookLM)', 'Google-NotebookLM', 'Google', 'assistant'],
  ['Mozilla/5.0 (compatible; AzureAI-SearchBot/1.0)', 'AzureAI-SearchBot', 'Microsoft', 'search indexer'],
  ['Mozilla/5.0 (compatible; amazon-kendra; +https://aws.amazon.com/kendra/)', 'amazon-kendra', 'Amazon', 'search indexer'],
  ['bedrockbot/1.0 (+https://docs.aws.amazon.com/bedrock/)', 'bedrockbot', 'Amazon', 'search indexer'],
  ['Mozilla/5.0 (compatible; Ai2Bot-DeepResearchEval/1.0; +https://www.allenai.org/crawler)', 'AI2Bot-DeepResearchEval', 'Allen AI', 'assistant'],
  ['Mozilla/5.0 (compatible; Ai2Bot-Dolma (+https://www.allenai.org/crawler))', 'AI2Bot', 'Allen AI', 'training crawler'],
  ['Mozilla/5.0 (compatible; Kimi-User/1.0)', 'Kimi-User', 'Moonshot AI', 'assistant'],
  ['Mozilla/5.0 (compatible; TongyiBot/1.0)', 'TongyiBot', 'Alibaba', 'assistant'],
  ['Mozilla/5.0 (compatible; YiyanBot/1.0)', 'YiyanBot', 'Baidu', 'assistant'],
  ['Mozilla/5.0 (compatible; ChatGLM-Spider/1.0; +https://open.bigmodel.cn)', 'ChatGLM-Spider', 'Zhipu AI', 'training crawler'],
  ['Mozilla/5.0 (compatible; Bravebot/1.0; +https://search.brave.com/help/brave-search-crawler)', 'Bravebot', 'Brave', 'search indexer'],
  ['Mozilla/5.0 (compatible; Brightbot 1.0)', 'Brightbot', 'Bright Data', 'training crawler'],
  ['Mozilla/5.0 (compatible; ExaSearchBot/1.0; +https://exa.ai)', 'ExaSearchBot', 'Exa', 'search indexer'],
  ['Mozilla/5.0 (compatible; ShapBot/0.1.0; +https://docs.parallel.ai/features/crawler)', 'ShapBot', 'Parallel', 'search indexer'],
  ['Mozilla/5.0 (compatible; Shap-User/1.0)', 'Shap-User', 'Parallel', 'assistant'],
  ['Mozilla/5.0 (compatible; SemrushBot-OCOB/1; +https://www.semrush.com/bot/)', 'SemrushBot-OCOB', 'Semrush', 'other'],
  ['Mozilla/5.0 (compatible; Linguee Bot (http://www.linguee.com/bot; bot@linguee.com))', 'Linguee Bot', 'Linguee', 'training crawler'],
  ['Mozilla/5.0 (compatible; Terra Cotta https://github.com/CeramicTeam/CeramicTerracotta)', 'TerraCotta', 'Ceramic AI', 'search indexer'],
  ['Mozilla/5.0 (compatible; Sidetrade indexer bot)', 'Sidetrade indexer bot', 'Sidetrade', 'training crawler'],
  ['LCC (+http://corpora.informatik.uni-leipzig.de/crawler_faq.html)', 'LCC', 'Leipzig Corpora Collection', 'training crawler'],
  ['Mozilla/5.0 (compatible; Kangaroo Bot/1.0; +https://kangaroollm.com.au/kangaroo-bot/)', 'Kangaroo Bot', 'Kangaroo LLM', 'training crawler'],
  ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36 Cursor/1.0', 'Cursor', 'Cursor', 'agent'],
  ['opencode/0.3.58', 'opencode', 'opencode', 'agent'],
  ['Mozilla/5.0 (compatible; Devin/1.0; +devin.ai)', 'Devin', 'Cognition', 'agent'],
  ['Mozilla/5.0 (compatible; Operator/1.0; +https://openai.com)', 'ChatGPT Agent', 'OpenAI', 'agent'],
  ['Mozilla/5.0 (compatible; OpenAI/1.0; +https://openai.com/bot)', 'OpenAI', 'OpenAI', 'other'],
  ['Mozilla/5.0 (compatible; Lightpanda/1.0)', 'Lightpanda', 'Lightpanda', 'agent'],
  ['YaK/1.0 (Linux; +https://www.meltwater.com)', 'YaK', 'Meltwater', 'other'],
];

/**
 * Every agent ai-robots-txt's robots.json names, as our own transcription of its keys; a UA
 * carrying any of them must resolve. Left out, on purpose (see the catalog): facebookexternalhit,
 * Scrapy and Spider.
 */
const AI_ROBOTS_TXT_AGENTS = [
  'AddSearchBot', 'AgentTimes', 'AI2Bot', 'AI2Bot-DeepResearchEval', 'Ai2Bot-Dolma', 'aiHitBot', 'AIWebIndex', 'amazon-kendra',
  'amazon-QBusiness', 'Amazonbot', 'AmazonBuyForMe', 'Amzn-SearchBot', 'Amzn-User', 'Andibot', 'Anomura', 'anthropic-ai', 'ApifyBot',
  'ApifyWebsiteContentCrawler', 'Applebot', 'Applebot-Extended', 'Aranet-SearchBot', 'atlassian-bot', 'Awario', 'AzureAI-SearchBot',
  'bedrockbot', 'bigsur.ai', 'Bravebot', 'Brightbot', 'Brightbot 1.0', 'BuddyBot', 'Bytespider', 'CCBot', 'Channel3Bot', 'ChatGLM-Spider',
  'ChatGPT Agent', 'ChatGPT-User', 'Claude-Code', 'Claude-SearchBot', 'Claude-User', 'Claude-Web', 'ClaudeBot', 'Cloudflare-AutoRAG',
  'CloudVertexBot', 'Code', 'cohere-ai', 'cohere-training-data-crawler', 'Cotoyogi', 'CragCrawler', 'Crawl4AI', 'Crawlspace', 'Cursor',
  'Datenbank Crawler', 'DeepSeekBot', 'Devin', 'Diffbot', 'DuckAssistBot', 'Echobot Bot', 'EchoboxBot', 'ExaBot', 'ExaSearchBot',
  'FacebookBot', 'Factset_spyderbot', 'FirecrawlAgent', 'FriendlyCrawler', 'GeistHaus-PageFetcher', 'Gemini-Deep-Research', 'Google-Agent',
  'Google-CloudVertexBot', 'Google-Extended', 'Google-Firebase', 'Google-Gemini-CLI', 'Google-NotebookLM', 'GoogleAgent-Mariner',
  'GoogleAgent-URLContext', 'GoogleOther', 'GoogleOther-Image', 'GoogleOther-Video', 'GPTBot', 'HenkBot', 'iAskBot', 'iaskspider',
  'ICC-Crawler', 'ImagesiftBot', 'imageSpider', 'img2dataset', 'ISSCyberRiskCrawler', 'kagi-fetcher', 'Kangaroo Bot', 'Kimi-User',
  'KlaviyoAIBot', 'KunatoCrawler', 'laion-huggingface-processor', 'LAIONDownloader', 'LCC', 'Lightpanda', 'LinerBot', 'Linguee Bot',
  'LinkupBot', 'Manus-User', 'meta-externalagent', 'Meta-ExternalAgent', 'meta-externalfetcher', 'Meta-ExternalFetcher', 'meta-webindexer',
  'MistralAI-User', 'Mozilla-Tabstack', 'MyCentralAIScraperBot', 'NagetBot', 'netEstate Imprint Crawler', 'newsai', 'NotebookLM', 'NovaAct',
  'OAI-SearchBot', 'omgili', 'omgilibot', 'OpenAI', 'opencode', 'Operator', 'PanguBot', 'Panscient', 'panscient.com', 'Perplexity-User',
  'PerplexityBot', 'PetalBot', 'PhindBot', 'Poggio-Citations', 'Poseidon Research Crawler', 'QualifiedBot', 'Querit-SearchBot', 'QueritBot',
  'QuillBot', 'quillbot.com', 'Reflectionbot', 'SBIntuitionsBot', 'SemrushBot-OCOB', 'SemrushBot-SWA', 'Shap-User', 'ShapBot',
  'Sidetrade indexer bot', 'TavilyBot', 'Terra Cotta', 'TerraCotta', 'Thinkbot', 'TikTokSpider', 'Timpibot', 'TongyiBot', 'Trae', 'TwinAgent',
  'UseAI', 'VelenPublicWebCrawler', 'WARDBot', 'Webzio-Extended', 'wpbot', 'WRTNBot', 'YaK', 'YandexAdditional', 'YandexAdditionalBot',
  'YiyanBot', 'YouBot', 'ZanistaBot',
];

/** [what it is, its UA]: browsers, search engines, SEO and link-preview bots, HTTP clients, editors. */
const NOT_AI_AGENTS: [string, string][] = [
  ['Chrome on Windows', 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36'],
  ['Firefox on Linux', 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0'],
  ['Safari on iPhone', 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1'],
  ['Edge', 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 Edg/124.0.2478.51'],
  ['Samsung Internet', 'Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/25.0 Chrome/121.0.0.0 Mobile Safari/537.36'],
  ['Internet Explorer 11', 'Mozilla/5.0 (Windows NT 6.1; WOW64; Trident/7.0; SLCC2; .NET CLR 2.0.50727; rv:11.0) like Gecko'],
  ['Googlebot', 'Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.6367.118 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)'],
  ['bingbot', 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm) Chrome/116.0.1938.76 Safari/537.36'],
  ['YandexBot', 'Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)'],
  ['Baiduspider', 'Mozilla/5.0 (compatible; Baiduspider/2.0; +http://www.baidu.com/search/spider.html)'],
  ['DuckDuckBot', 'DuckDuckBot/1.1; (+http://duckduckgo.com/duckduckbot.html)'],
  ['Exalead’s Exabot', 'Mozilla/5.0 (compatible; Exabot/3.0; +http://www.exabot.com/go/robot)'],
  ['Exalead’s Exabot-Images', 'Mozilla/5.0 (compatible; Exabot-Images/3.0; +http://www.exabot.com/go/robot)'],
  ['SemrushBot', 'Mozilla/5.0 (compatible; SemrushBot/7~bl; +http://www.semrush.com/bot.html)'],
  ['AhrefsBot', 'Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)'],
  ['facebookexternalhit', 'facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)'],
  ['Scrapy', 'Scrapy/2.11.0 (+https://scrapy.org)'],
  ['curl', 'curl/8.5.0'],
  ['python-requests', 'python-requests/2.31.0'],
  ['the OpenAI SDK', 'OpenAI/Python 1.51.0'],
  ['VS Code’s own browser', 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Code/1.95.0 Chrome/128.0.6613.186 Electron/32.2.1 Safari/537.36'],
  ['Cursor’s own browser', 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Cursor/0.42.3 Chrome/124.0.6367.243 Electron/30.4.0 Safari/537.36'],
  ['an empty UA', ''],
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

  it.each(AI_ROBOTS_TXT_AGENTS)('knows %s from ai-robots-txt', (token) => {
    expect(matchAiAgent(`Mozilla/5.0 (compatible; ${token}/1.0; +https://example.com/bot)`)).not.toBeNull();
  });

  it.each(NOT_AI_AGENTS)('answers null for %s', (_what, ua) => {
    expect(matchAiAgent(ua)).toBeNull();
  });

  it('names the leftmost agent of a UA that carries two', () => {
    expect(matchAiAgent('Mozilla/5.0 (compatible; GPTBot/1.2; +https://openai.com/gptbot) ClaudeBot/1.0')?.name).toBe('GPTBot');
    expect(matchAiAgent('ChatGPT-User/1.0 (compatible; +https://openai.com/bot)')?.name).toBe('ChatGPT-User');
  });

  it('exposes the catalog with one pattern per entry and no duplicate names', () => {
    expect(AI_AGENTS.length).toBeGreaterThanOrEqual(140);
    expect(new Set(AI_AGENTS.map((agent) => agent.name)).size).toBe(AI_AGENTS.length);
    for (const agent of AI_AGENTS) {
      expect(agent.pattern.flags).toContain('i');
      // The matcher hoists the leading \b and numbers one group per entry.
      expect(agent.pattern.source.startsWith('\\b')).toBe(true);
      expect(new RegExp(`${agent.pattern.source}|`).exec('')).toHaveLength(1);
    }
  });
});
