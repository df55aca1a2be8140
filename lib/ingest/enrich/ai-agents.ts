// The bundled catalog of AI agents: which crawler, assistant or agent a User-Agent belongs to.
// The AI-fetch ingest route stores the match (and refuses unknown agents); the bot filter uses it
// too, so an AI agent's browser-like UA never counts as a visitor.
import { BoundedCache } from './cache.ts';

export interface AiAgent {
  name: string;
  family: string;
  category: 'training crawler' | 'search indexer' | 'assistant' | 'agent' | 'other';
}

/**
 * Sources: the agents ai-robots-txt (github.com/ai-robots-txt/ai.robots.txt, robots.json) and
 * crawler-user-agents (github.com/monperrus/crawler-user-agents) track as AI, and the user agents
 * the vendors document. Categories: a training crawler collects for models, a search indexer
 * builds the index an AI search or answer engine (or a customer's RAG index) draws on, an
 * assistant fetches a page because a user asked it to (a user-triggered fetch), an agent browses
 * and acts on a user's behalf (browser and coding agents), and other is a crawler that feeds AI
 * products for purposes its operator does not spell out.
 *
 * Patterns are case-insensitive tokens bounded by non-word characters, so "GoogleOther" never
 * matches inside a longer word. Each starts with \b, which the matcher hoists in front of all of
 * them (a third of the time of one \b per alternative), and captures nothing: the matcher numbers
 * one group per entry.
 * Where a UA holds two tokens the leftmost wins; where two patterns match at the same place the
 * earlier entry wins, so a token that extends another comes first (Applebot-Extended before
 * Applebot). Search engines' own crawlers (Googlebot, Bingbot, YandexBot, Baiduspider) are not
 * here: they index for classic search, and the dashboard would mislabel them as AI.
 *
 * Left out of the lists on purpose: facebookexternalhit (Meta's link-preview fetcher), Scrapy and
 * Spider (a scraping framework and a bare word, not an operator's agent). The coding agents that
 * ship as Electron apps (Code, Cursor, Trae) are matched only outside their Electron shell: a
 * person browsing inside the editor sends the same product token beside Electron/.
 *
 * Where an operator documents only a robots.txt token and crawls under another UA (Google-Extended,
 * Applebot-Extended, Webzio-Extended), the token is still listed so logs that carry it resolve.
 * OpenAI's ChatGPT agent (formerly Operator) browses with a stock Chrome UA and proves itself with
 * an HTTP message signature (Signature-Agent: "https://chatgpt.com"); only forwarders that label it
 * in the UA string are recognised here.
 */
export const AI_AGENTS: readonly (AiAgent & { pattern: RegExp })[] = [
  // OpenAI
  { name: 'GPTBot', family: 'OpenAI', category: 'training crawler', pattern: /\bGPTBot\b/i },
  { name: 'OAI-SearchBot', family: 'OpenAI', category: 'search indexer', pattern: /\bOAI-SearchBot\b/i },
  { name: 'ChatGPT-User', family: 'OpenAI', category: 'assistant', pattern: /\bChatGPT-User\b/i },
  { name: 'ChatGPT Agent', family: 'OpenAI', category: 'agent', pattern: /\b(?:ChatGPT[- ]?Agent\b|OpenAI[- ]Operator\b|(?<=^|[\s;(])Operator\/\d)/i },
  // The bare token, not openai.com in another agent's contact URL, nor the SDK's "OpenAI/Python".
  { name: 'OpenAI', family: 'OpenAI', category: 'other', pattern: /\b(?<=^|[\s;(])OpenAI(?:\/\d|(?=[;)]|$))/i },
  // Anthropic
  { name: 'Claude-SearchBot', family: 'Anthropic', category: 'search indexer', pattern: /\bClaude-SearchBot\b/i },
  { name: 'Claude-User', family: 'Anthropic', category: 'assistant', pattern: /\bClaude-User\b/i },
  { name: 'Claude-Web', family: 'Anthropic', category: 'other', pattern: /\bClaude-Web\b/i },
  { name: 'Claude Code', family: 'Anthropic', category: 'agent', pattern: /\bClaude-Code\b/i },
  { name: 'ClaudeBot', family: 'Anthropic', category: 'training crawler', pattern: /\bClaudeBot\b/i },
  { name: 'anthropic-ai', family: 'Anthropic', category: 'training crawler', pattern: /\banthropic-ai\b/i },
  // Perplexity
  { name: 'Perplexity-User', family: 'Perplexity', category: 'assistant', pattern: /\bPerplexity-User\b/i },
  { name: 'PerplexityBot', family: 'Perplexity', category: 'search indexer', pattern: /\bPerplexityBot\b/i },
  // Google (Googlebot itself is classic search and deliberately absent)
  { name: 'Gemini-Deep-Research', family: 'Google', category: 'assistant', pattern: /\bGemini-Deep-Research\b/i },
  { name: 'Google-NotebookLM', family: 'Google', category: 'assistant', pattern: /\b(?:Google-)?NotebookLM\b/i },
  { name: 'GoogleAgent-Mariner', family: 'Google', category: 'agent', pattern: /\bGoogleAgent-Mariner\b/i },
  { name: 'GoogleAgent-URLContext', family: 'Google', category: 'assistant', pattern: /\bGoogleAgent-URLContext\b/i },
  { name: 'Google-Agent', family: 'Google', category: 'agent', pattern: /\bGoogle-Agent\b/i },
  { name: 'Google-Gemini-CLI', family: 'Google', category: 'agent', pattern: /\bGoogle-Gemini-CLI\b/i },
  { name: 'Google-Firebase', family: 'Google', category: 'assistant', pattern: /\bGoogle-Firebase\b/i },
  { name: 'Google-CloudVertexBot', family: 'Google', category: 'search indexer', pattern: /\b(?:Google-)?CloudVertexBot\b/i },
  { name: 'Google-Extended', family: 'Google', category: 'training crawler', pattern: /\bGoogle-Extended\b/i },
  { name: 'GoogleOther', family: 'Google', category: 'other', pattern: /\bGoogleOther\b/i },
  // Microsoft, GitHub
  { name: 'AzureAI-SearchBot', family: 'Microsoft', category: 'search indexer', pattern: /\bAzureAI-SearchBot\b/i },
  { name: 'Code', family: 'GitHub', category: 'agent', pattern: /\b(?<=^|[\s;(])Code\/\d(?!.*\bElectron\/)/i },
  // ByteDance
  { name: 'Bytespider', family: 'ByteDance', category: 'training crawler', pattern: /\bBytespider\b/i },
  { name: 'TikTokSpider', family: 'ByteDance', category: 'training crawler', pattern: /\bTikTokSpider\b/i },
  { name: 'Trae', family: 'ByteDance', category: 'agent', pattern: /\bTrae\/\d(?!.*\bElectron\/)/i },
  // Common Crawl
  { name: 'CCBot', family: 'Common Crawl', category: 'training crawler', pattern: /\bCCBot\b/i },
  // Amazon
  { name: 'NovaAct', family: 'Amazon', category: 'agent', pattern: /\bNovaAct\b/i },
  { name: 'AmazonBuyForMe', family: 'Amazon', category: 'agent', pattern: /\bAmazonBuyForMe\b/i },
  { name: 'Amzn-User', family: 'Amazon', category: 'assistant', pattern: /\bAmzn-User\b/i },
  { name: 'Amzn-SearchBot', family: 'Amazon', category: 'search indexer', pattern: /\bAmzn-SearchBot\b/i },
  { name: 'Amazonbot', family: 'Amazon', category: 'search indexer', pattern: /\bAmazonbot\b/i },
  { name: 'amazon-kendra', family: 'Amazon', category: 'search indexer', pattern: /\bamazon-kendra\b/i },
  { name: 'amazon-QBusiness', family: 'Amazon', category: 'search indexer', pattern: /\bamazon-QBusiness\b/i },
  { name: 'bedrockbot', family: 'Amazon', category: 'search indexer', pattern: /\bbedrockbot\b/i },
  // Apple
  { name: 'Applebot-Extended', family: 'Apple', category: 'training crawler', pattern: /\bApplebot-Extended\b/i },
  { name: 'Applebot', family: 'Apple', category: 'search indexer', pattern: /\bApplebot\b/i },
  // Meta (facebookexternalhit is the link-preview fetcher, not an AI agent)
  { name: 'meta-externalagent', family: 'Meta', category: 'training crawler', pattern: /\bmeta-externalagent\b/i },
  { name: 'meta-externalfetcher', family: 'Meta', category: 'assistant', pattern: /\bmeta-externalfetcher\b/i },
  { name: 'meta-webindexer', family: 'Meta', category: 'search indexer', pattern: /\bmeta-webindexer\b/i },
  { name: 'FacebookBot', family: 'Meta', category: 'training crawler', pattern: /\bFacebookBot\b/i },
  // Cohere
  { name: 'cohere-training-data-crawler', family: 'Cohere', category: 'training crawler', pattern: /\bcohere-training-data-crawler\b/i },
  { name: 'cohere-ai', family: 'Cohere', category: 'assistant', pattern: /\bcohere-ai\b/i },
  // Others, alphabetical by family
  { name: 'AddSearchBot', family: 'AddSearch', category: 'search indexer', pattern: /\bAddSearchBot\b/i },
  { name: 'aiHitBot', family: 'aiHit', category: 'other', pattern: /\baiHitBot\b/i },
  { name: 'TongyiBot', family: 'Alibaba', category: 'assistant', pattern: /\bTongyiBot\b/i },
  { name: 'AI2Bot-DeepResearchEval', family: 'Allen AI', category: 'assistant', pattern: /\bAi2Bot-DeepResearchEval\b/i },
  { name: 'AI2Bot', family: 'Allen AI', category: 'training crawler', pattern: /\bAi2Bot(?:-Dolma)?\b/i },
  { name: 'Andibot', family: 'Andi', category: 'search indexer', pattern: /\bAndibot\b/i },
  { name: 'ApifyWebsiteContentCrawler', family: 'Apify', category: 'other', pattern: /\bApifyWebsiteContentCrawler\b/i },
  { name: 'ApifyBot', family: 'Apify', category: 'other', pattern: /\bApifyBot\b/i },
  { name: 'Aranet-SearchBot', family: 'Aranet', category: 'search indexer', pattern: /\bAranet-SearchBot\b/i },
  { name: 'atlassian-bot', family: 'Atlassian', category: 'search indexer', pattern: /\batlassian-bot\b/i },
  { name: 'Awario', family: 'Awario', category: 'other', pattern: /\bAwario(?:SmartBot|RssBot)?\b/i },
  { name: 'YiyanBot', family: 'Baidu', category: 'assistant', pattern: /\bYiyanBot\b/i },
  { name: 'bigsur.ai', family: 'Big Sur AI', category: 'assistant', pattern: /\bbigsur\.ai\b/i },
  { name: 'Bravebot', family: 'Brave', category: 'search indexer', pattern: /\bBravebot\b/i },
  { name: 'Brightbot', family: 'Bright Data', category: 'training crawler', pattern: /\bBrightbot\b/i },
  { name: 'BuddyBot', family: 'BuddyBot', category: 'assistant', pattern: /\bBuddyBot\b/i },
  { name: 'TerraCotta', family: 'Ceramic AI', category: 'search indexer', pattern: /\bTerra ?Cotta\b/i },
  { name: 'Channel3Bot', family: 'Channel3', category: 'search indexer', pattern: /\bChannel3Bot\b/i },
  { name: 'Cloudflare-AutoRAG', family: 'Cloudflare', category: 'search indexer', pattern: /\bCloudflare-AutoRAG\b/i },
  { name: 'Devin', family: 'Cognition', category: 'agent', pattern: /\bDevin\/\d/i },
  { name: 'CragCrawler', family: 'CragSoftware', category: 'other', pattern: /\bCragCrawler\b/i },
  { name: 'Crawl4AI', family: 'Crawl4AI', category: 'other', pattern: /\bCrawl4AI\b/i },
  { name: 'Crawlspace', family: 'Crawlspace', category: 'other', pattern: /\bCrawlspace\b/i },
  { name: 'Cursor', family: 'Cursor', category: 'agent', pattern: /\bCursor\/\d(?!.*\bElectron\/)/i },
  { name: 'Datenbank Crawler', family: 'Datenbank', category: 'other', pattern: /\bDatenbank ?Crawler\b/i },
  { name: 'DeepSeekBot', family: 'DeepSeek', category: 'training crawler', pattern: /\bDeepSeekBot\b/i },
  { name: 'Diffbot', family: 'Diffbot', category: 'other', pattern: /\bDiffbot\b/i },
  { name: 'Anomura', family: 'Direqt', category: 'search indexer', pattern: /\bAnomura\b/i },
  { name: 'DuckAssistBot', family: 'DuckDuckGo', category: 'assistant', pattern: /\bDuckAssistBot\b/i },
  { name: 'EchoboxBot', family: 'Echobox', category: 'other', pattern: /\bEchobo(?:xBot|t ?Bot)\b/i },
  { name: 'ExaSearchBot', family: 'Exa', category: 'search indexer', pattern: /\bExaSearchBot\b/i },
  // Exalead's classic search crawler sent "Exabot/3.0", "Exabot-Images" and "Exabot PyExalead", with exabot.com.
  { name: 'ExaBot', family: 'Exa', category: 'search indexer', pattern: /\bExaBot\b(?!\/3\.|-Images| PyExalead|\.com)/i },
  { name: 'Factset_spyderbot', family: 'FactSet', category: 'training crawler', pattern: /\bFactset_spyderbot\b/i },
  { name: 'FirecrawlAgent', family: 'Firecrawl', category: 'other', pattern: /\bFirecrawlAgent\b/i },
  { name: 'FriendlyCrawler', family: 'FriendlyCrawler', category: 'training crawler', pattern: /\bFriendlyCrawler\b/i },
  { name: 'GeistHaus-PageFetcher', family: 'GeistHaus', category: 'assistant', pattern: /\bGeistHaus-PageFetcher\b/i },
  { name: 'PanguBot', family: 'Huawei', category: 'training crawler', pattern: /\bPanguBot\b/i },
  { name: 'PetalBot', family: 'Huawei', category: 'search indexer', pattern: /\bPetalBot\b/i },
  { name: 'iaskspider', family: 'iAsk', category: 'assistant', pattern: /\b(?:iaskspider|iAskBot)\b/i },
  { name: 'ImagesiftBot', family: 'ImageSift', category: 'other', pattern: /\bImagesiftBot\b/i },
  { name: 'imageSpider', family: 'imageSpider', category: 'other', pattern: /\bimageSpider\b/i },
  { name: 'img2dataset', family: 'img2dataset', category: 'training crawler', pattern: /\bimg2dataset\b/i },
  { name: 'ISSCyberRiskCrawler', family: 'ISS', category: 'training crawler', pattern: /\bISSCyberRiskCrawler\b/i },
  { name: 'kagi-fetcher', family: 'Kagi', category: 'assistant', pattern: /\bkagi-fetcher\b/i },
  { name: 'Kangaroo Bot', family: 'Kangaroo LLM', category: 'training crawler', pattern: /\bKangaroo ?Bot\b/i },
  { name: 'KlaviyoAIBot', family: 'Klaviyo', category: 'assistant', pattern: /\bKlaviyoAIBot\b/i },
  { name: 'KunatoCrawler', family: 'Kunato', category: 'other', pattern: /\bKunatoCrawler\b/i },
  { name: 'LAIONDownloader', family: 'LAION', category: 'training crawler', pattern: /\bLAIONDownloader\b/i },
  { name: 'laion-huggingface-processor', family: 'LAION', category: 'training crawler', pattern: /\blaion-huggingface-processor\b/i },
  { name: 'LCC', family: 'Leipzig Corpora Collection', category: 'training crawler', pattern: /\b(?<=^|[;(]\s*)LCC\b/i },
  { name: 'Lightpanda', family: 'Lightpanda', category: 'agent', pattern: /\bLightpanda\b/i },
  { name: 'LinerBot', family: 'Liner', category: 'assistant', pattern: /\bLinerBot\b/i },
  { name: 'Linguee Bot', family: 'Linguee', category: 'training crawler', pattern: /\bLinguee ?Bot\b/i },
  { name: 'LinkupBot', family: 'Linkup', category: 'search indexer', pattern: /\bLinkupBot\b/i },
  { name: 'AIWebIndex', family: 'Lyrenth', category: 'search indexer', pattern: /\bAIWebIndex\b/i },
  { name: 'Manus-User', family: 'Manus', category: 'agent', pattern: /\bManus-User\b/i },
  { name: 'YaK', family: 'Meltwater', category: 'other', pattern: /\bYaK\/\d/i },
  { name: 'MistralAI-User', family: 'Mistral', category: 'assistant', pattern: /\bMistralAI-User\b/i },
  { name: 'Kimi-User', family: 'Moonshot AI', category: 'assistant', pattern: /\bKimi-User\b/i },
  { name: 'Mozilla-Tabstack', family: 'Mozilla', category: 'agent', pattern: /\bMozilla-Tabstack\b/i },
  { name: 'MyCentralAIScraperBot', family: 'MyCentralAIScraperBot', category: 'training crawler', pattern: /\bMyCentralAIScraperBot\b/i },
  { name: 'NagetBot', family: 'Naget', category: 'training crawler', pattern: /\bNagetBot\b/i },
  { name: 'netEstate Imprint Crawler', family: 'netEstate', category: 'other', pattern: /\bnetEstate Imprint Crawler\b/i },
  { name: 'newsai', family: 'newsai', category: 'other', pattern: /\bnewsai\b/i },
  { name: 'ICC-Crawler', family: 'NICT', category: 'training crawler', pattern: /\bICC-Crawler\b/i },
  { name: 'opencode', family: 'opencode', category: 'agent', pattern: /\bopencode\b/i },
  { name: 'Panscient', family: 'Panscient', category: 'training crawler', pattern: /\bPanscient\b/i },
  { name: 'Shap-User', family: 'Parallel', category: 'assistant', pattern: /\bShap-User\b/i },
  { name: 'ShapBot', family: 'Parallel', category: 'search indexer', pattern: /\bShapBot\b/i },
  { name: 'PhindBot', family: 'Phind', category: 'assistant', pattern: /\bPhindBot\b/i },
  { name: 'Poggio-Citations', family: 'Poggio', category: 'assistant', pattern: /\bPoggio-Citations\b/i },
  { name: 'Poseidon Research Crawler', family: 'Poseidon Research', category: 'training crawler', pattern: /\bPoseidon Research Crawler\b/i },
  { name: 'QualifiedBot', family: 'Qualified', category: 'assistant', pattern: /\bQualifiedBot\b/i },
  { name: 'Querit-SearchBot', family: 'Querit', category: 'search indexer', pattern: /\bQuerit-SearchBot\b/i },
  { name: 'QueritBot', family: 'Querit', category: 'search indexer', pattern: /\bQueritBot\b/i },
  { name: 'QuillBot', family: 'QuillBot', category: 'other', pattern: /\bQuillBot\b/i },
  { name: 'wpbot', family: 'QuantumCloud', category: 'assistant', pattern: /\bwpbot\b/i },
  { name: 'Reflectionbot', family: 'Reflection AI', category: 'training crawler', pattern: /\bReflectionbot\b/i },
  { name: 'Cotoyogi', family: 'ROIS', category: 'training crawler', pattern: /\bCotoyogi\b/i },
  { name: 'SBIntuitionsBot', family: 'SB Intuitions', category: 'training crawler', pattern: /\bSBIntuitionsBot\b/i },
  // Semrush's own SemrushBot is an SEO crawler; only the two that feed its AI writing tools are here.
  { name: 'SemrushBot-OCOB', family: 'Semrush', category: 'other', pattern: /\bSemrushBot-OCOB\b/i },
  { name: 'SemrushBot-SWA', family: 'Semrush', category: 'other', pattern: /\bSemrushBot-SWA\b/i },
  { name: 'Sidetrade indexer bot', family: 'Sidetrade', category: 'training crawler', pattern: /\bSidetrade indexer bot\b/i },
  { name: 'TavilyBot', family: 'Tavily', category: 'search indexer', pattern: /\bTavilyBot\b/i },
  { name: 'AgentTimes', family: 'The Agent Times', category: 'other', pattern: /\bAgentTimes\b/i },
  { name: 'Thinkbot', family: 'Thinkbot', category: 'other', pattern: /\bThinkbot\b/i },
  { name: 'Timpibot', family: 'Timpi', category: 'training crawler', pattern: /\bTimpibot\b/i },
  { name: 'TwinAgent', family: 'Twin', category: 'agent', pattern: /\bTwinAgent\b/i },
  { name: 'UseAI', family: 'Use AI', category: 'assistant', pattern: /\bUseAI\b/i },
  { name: 'HenkBot', family: 'Valyu', category: 'search indexer', pattern: /\bHenkBot\b/i },
  { name: 'VelenPublicWebCrawler', family: 'Velen', category: 'training crawler', pattern: /\bVelenPublicWebCrawler\b/i },
  { name: 'Webzio-Extended', family: 'Webz.io', category: 'training crawler', pattern: /\bWebzio-Extended\b/i },
  { name: 'omgili', family: 'Webz.io', category: 'other', pattern: /\bomgili(?:bot)?\b/i },
  { name: 'WARDBot', family: 'WEBSPARK', category: 'other', pattern: /\bWARDBot\b/i },
  { name: 'WRTNBot', family: 'Wrtn', category: 'other', pattern: /\bWRTNBot\b/i },
  { name: 'YandexAdditional', family: 'Yandex', category: 'assistant', pattern: /\bYandexAdditional(?:Bot)?\b/i },
  { name: 'YouBot', family: 'You.com', category: 'search indexer', pattern: /\bYouBot\b/i },
  { name: 'ZanistaBot', family: 'Zanista', category: 'search indexer', pattern: /\bZanistaBot\b/i },
  { name: 'ChatGLM-Spider', family: 'Zhipu AI', category: 'training crawler', pattern: /\bChatGLM-Spider\b/i },
];

/** The entries' patterns behind the \b they all start with, each wrapped in `group`. */
const alternation = (group: (source: string) => string) => `\\b(?:${AI_AGENTS.map((agent) => group(agent.pattern.source.replace(/^\\b/, ''))).join('|')})`;

/**
 * One scan of the UA with every pattern at once answers "is this an AI agent?" (about a
 * microsecond for a browser's UA). Capturing groups would make it three times slower, so only a
 * hit runs the numbered twin, anchored where the scan matched: the group that took part names
 * the entry, the same one the scan found (the same alternatives in the same order).
 */
const ANY_AGENT = new RegExp(alternation((source) => `(?:${source})`), 'i');
const WHICH_AGENT = new RegExp(alternation((source) => `(${source})`), 'iy');

/** AiAgent views without the pattern, made once so a match allocates nothing. */
const VIEWS: readonly AiAgent[] = AI_AGENTS.map(({ name, family, category }) => Object.freeze({ name, family, category }));

const CACHEABLE_UA_MAX = 1000;
const cache = new BoundedCache<AiAgent | null>(1000, CACHEABLE_UA_MAX);

function find(userAgent: string): AiAgent | null {
  const hit = ANY_AGENT.exec(userAgent);
  if (!hit) return null;
  WHICH_AGENT.lastIndex = hit.index;
  const groups = WHICH_AGENT.exec(userAgent) as RegExpExecArray;
  for (let group = 1; group < groups.length; group++) {
    if (groups[group] !== undefined) return VIEWS[group - 1];
  }
  return null;
}

/** The catalog entry a User-Agent belongs to, or null when it is not a known AI agent. */
export function matchAiAgent(userAgent: string): AiAgent | null {
  if (!userAgent) return null;
  return cache.getOrMake(userAgent, find);
}
