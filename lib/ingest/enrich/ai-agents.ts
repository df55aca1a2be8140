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
 * Order matters: the first pattern that matches wins, so a token that contains or extends another
 * comes first (Applebot-Extended before Applebot, Claude-SearchBot before ClaudeBot). Patterns are
 * case-insensitive tokens bounded by non-word characters, so "GoogleOther" never matches inside a
 * longer word. Search engines' own crawlers (Googlebot, Bingbot, YandexBot, Baiduspider) are not
 * here: they index for classic search, and the dashboard would mislabel them as AI.
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
  { name: 'ChatGPT Agent', family: 'OpenAI', category: 'agent', pattern: /\bChatGPT[- ]?Agent\b|\bOpenAI[- ]Operator\b|(?:^|[\s;(])Operator\/\d/i },
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
  { name: 'Google-NotebookLM', family: 'Google', category: 'assistant', pattern: /\bGoogle-NotebookLM\b/i },
  { name: 'GoogleAgent-Mariner', family: 'Google', category: 'agent', pattern: /\bGoogleAgent-Mariner\b/i },
  { name: 'Google-CloudVertexBot', family: 'Google', category: 'search indexer', pattern: /\bGoogle-CloudVertexBot\b/i },
  { name: 'Google-Extended', family: 'Google', category: 'training crawler', pattern: /\bGoogle-Extended\b/i },
  { name: 'GoogleOther', family: 'Google', category: 'other', pattern: /\bGoogleOther\b/i },
  // ByteDance
  { name: 'Bytespider', family: 'ByteDance', category: 'training crawler', pattern: /\bBytespider\b/i },
  { name: 'TikTokSpider', family: 'ByteDance', category: 'training crawler', pattern: /\bTikTokSpider\b/i },
  // Common Crawl
  { name: 'CCBot', family: 'Common Crawl', category: 'training crawler', pattern: /\bCCBot\b/i },
  // Amazon
  { name: 'NovaAct', family: 'Amazon', category: 'agent', pattern: /\bNovaAct\b/i },
  { name: 'AmazonBuyForMe', family: 'Amazon', category: 'agent', pattern: /\bAmazonBuyForMe\b/i },
  { name: 'Amzn-User', family: 'Amazon', category: 'assistant', pattern: /\bAmzn-User\b/i },
  { name: 'Amzn-SearchBot', family: 'Amazon', category: 'search indexer', pattern: /\bAmzn-SearchBot\b/i },
  { name: 'Amazonbot', family: 'Amazon', category: 'search indexer', pattern: /\bAmazonbot\b/i },
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
  { name: 'AI2Bot', family: 'Allen AI', category: 'training crawler', pattern: /\bAi2Bot(?:-Dolma)?\b/i },
  { name: 'DeepSeekBot', family: 'DeepSeek', category: 'training crawler', pattern: /\bDeepSeekBot\b/i },
  { name: 'Devin', family: 'Cognition', category: 'agent', pattern: /\bDevin\/\d/i },
  { name: 'Diffbot', family: 'Diffbot', category: 'other', pattern: /\bDiffbot\b/i },
  { name: 'DuckAssistBot', family: 'DuckDuckGo', category: 'assistant', pattern: /\bDuckAssistBot\b/i },
  { name: 'FirecrawlAgent', family: 'Firecrawl', category: 'other', pattern: /\bFirecrawlAgent\b/i },
  { name: 'PanguBot', family: 'Huawei', category: 'training crawler', pattern: /\bPanguBot\b/i },
  { name: 'PetalBot', family: 'Huawei', category: 'search indexer', pattern: /\bPetalBot\b/i },
  { name: 'iaskspider', family: 'iAsk', category: 'assistant', pattern: /\biaskspider\b|\biAskBot\b/i },
  { name: 'ImagesiftBot', family: 'ImageSift', category: 'other', pattern: /\bImagesiftBot\b/i },
  { name: 'kagi-fetcher', family: 'Kagi', category: 'assistant', pattern: /\bkagi-fetcher\b/i },
  { name: 'Kangaroo Bot', family: 'Kangaroo LLM', category: 'training crawler', pattern: /\bKangaroo ?Bot\b/i },
  { name: 'Manus-User', family: 'Manus', category: 'agent', pattern: /\bManus-User\b/i },
  { name: 'MistralAI-User', family: 'Mistral', category: 'assistant', pattern: /\bMistralAI-User\b/i },
  { name: 'PhindBot', family: 'Phind', category: 'assistant', pattern: /\bPhindBot\b/i },
  { name: 'TavilyBot', family: 'Tavily', category: 'search indexer', pattern: /\bTavilyBot\b/i },
  { name: 'Timpibot', family: 'Timpi', category: 'training crawler', pattern: /\bTimpibot\b/i },
  { name: 'Webzio-Extended', family: 'Webz.io', category: 'training crawler', pattern: /\bWebzio-Extended\b/i },
  { name: 'omgili', family: 'Webz.io', category: 'other', pattern: /\bomgili(?:bot)?\b/i },
  { name: 'YandexAdditional', family: 'Yandex', category: 'assistant', pattern: /\bYandexAdditional(?:Bot)?\b/i },
  { name: 'YouBot', family: 'You.com', category: 'search indexer', pattern: /\bYouBot\b/i },
];

/**
 * One pass over the UA with every pattern at once answers the common question ("is this any AI
 * agent?") in a single scan; only a hit walks the ordered list to find which one.
 */
const ANY_AGENT = new RegExp(AI_AGENTS.map((agent) => `(?:${agent.pattern.source})`).join('|'), 'i');

/** AiAgent views without the pattern, made once so a match allocates nothing. */
const VIEWS: readonly AiAgent[] = AI_AGENTS.map(({ name, family, category }) => Object.freeze({ name, family, category }));

const cache = new BoundedCache<AiAgent | null>(1000);
const CACHEABLE_UA_MAX = 1000;

function find(userAgent: string): AiAgent | null {
  if (!ANY_AGENT.test(userAgent)) return null;
  for (let i = 0; i < AI_AGENTS.length; i++) {
    if (AI_AGENTS[i].pattern.test(userAgent)) return VIEWS[i];
  }
  return null;
}

/** The catalog entry a User-Agent belongs to, or null when it is not a known AI agent. */
export function matchAiAgent(userAgent: string): AiAgent | null {
  if (!userAgent) return null;
  const hit = cache.get(userAgent);
  if (hit !== undefined) return hit;
  const agent = find(userAgent);
  if (userAgent.length <= CACHEABLE_UA_MAX) cache.set(userAgent, agent);
  return agent;
}
