// The providers, through their official SDKs: an OpenAI-compatible chat-completions endpoint asked
// for a JSON-schema structured output, or Anthropic's messages API made to call one tool whose
// input is that schema. Both SDKs send through the host's guarded client (adapted to the fetch
// they take), with one deadline, no retries (the limiter counts every call), and failures turned
// into a safe category; the provider's error bodies and messages go nowhere.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import type { PluginHost } from '../../lib/plugins/api.ts';

export type ProviderName = 'openai-compatible' | 'anthropic';
export type FailureCategory = 'provider_timeout' | 'provider_error' | 'rate_limited';

export interface ProviderSettings {
  provider: ProviderName;
  model: string;
  baseUrl?: string;
  apiKey?: string;
  timeoutMs: number;
  /** The operator allowed a base URL on a loopback or private address. */
  allowPrivate: boolean;
}

export interface ProviderRequest {
  system: string;
  user: string;
  /** The structured output's (or the tool input's) name and JSON schema. */
  name: string;
  schema: Record<string, unknown>;
}

export interface ProviderAnswer {
  /** The structured output, parsed; undefined when the provider gave none. */
  output: unknown;
  /** The output as the provider sent it, only ever hashed. */
  raw: string;
  usage: { input_tokens: number; output_tokens: number } | null;
}

/** Why a call gave no answer, as a category safe to store and show. */
export class ProviderFailure extends Error {
  readonly category: FailureCategory;
  constructor(category: FailureCategory) {
    super(`the provider call failed: ${category}`);
    this.name = 'ProviderFailure';
    this.category = category;
  }
}

/** The answer body the guarded client accepts from a provider. */
const MAX_ANSWER_BYTES = 2 * 1024 * 1024;
const MAX_OUTPUT_TOKENS = 2048;

/**
 * host.fetch as the SDKs' `fetch`. The guarded client's failure (its `kind`) is remembered in
 * `failed`, because the SDKs wrap it in errors of their own.
 */
function guardedFetch(host: PluginHost, settings: ProviderSettings, failed: { kind?: string }) {
  return async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const headers = Object.fromEntries(new Headers(init?.headers).entries());
    const body = init?.body;
    if (body !== undefined && body !== null && typeof body !== 'string') throw new TypeError('provider requests are sent with a JSON text body');
    try {
      const answer = await host.fetch(url, {
        method: init?.method ?? 'GET',
        headers,
        body: body ?? undefined,
        timeoutMs: settings.timeoutMs,
        maxBytes: MAX_ANSWER_BYTES,
        allowPrivate: settings.allowPrivate,
      });
      const responseHeaders = new Headers();
      for (const [name, value] of Object.entries(answer.headers)) {
        if (value !== undefined) responseHeaders.set(name, Array.isArray(value) ? value.join(', ') : value);
      }
      const empty = answer.status === 204 || answer.status === 304;
      return new Response(empty ? null : new Uint8Array(answer.body), { status: answer.status, headers: responseHeaders });
    } catch (err) {
      failed.kind = (err as { kind?: string }).kind ?? 'network';
      throw err;
    }
  };
}

function categoryOf(err: unknown, failed: { kind?: string }): FailureCategory {
  if (failed.kind === 'timeout') return 'provider_timeout';
  if (failed.kind !== undefined) return 'provider_error';
  if ((err as { status?: unknown }).status === 429) return 'rate_limited';
  if (err instanceof OpenAI.APIConnectionTimeoutError || err instanceof Anthropic.APIConnectionTimeoutError) return 'provider_timeout';
  return 'provider_error';
}

export async function callProvider(host: PluginHost, settings: ProviderSettings, request: ProviderRequest): Promise<ProviderAnswer> {
  const failed: { kind?: string } = {};
  // Every option the SDKs would otherwise read from the environment (keys, organisations, base
  // URLs, log levels) is given: what is sent is what the plugin's settings say.
  const common = { fetch: guardedFetch(host, settings, failed), maxRetries: 0, timeout: settings.timeoutMs, logLevel: 'off' as const };
  try {
    if (settings.provider === 'anthropic') {
      const client = new Anthropic({ ...common, apiKey: settings.apiKey, authToken: null, webhookKey: null, baseURL: settings.baseUrl });
      const message = await client.messages.create({
        model: settings.model,
        max_tokens: MAX_OUTPUT_TOKENS,
        system: request.system,
        messages: [{ role: 'user', content: request.user }],
        tools: [{ name: request.name, description: 'Record the chosen opportunities.', input_schema: { ...request.schema, type: 'object' } }],
        tool_choice: { type: 'tool', name: request.name },
      });
      const call = message.content.find((block) => block.type === 'tool_use' && block.name === request.name);
      const output = call?.type === 'tool_use' ? call.input : undefined;
      return {
        output,
        raw: JSON.stringify(message.content),
        usage: message.usage ? { input_tokens: message.usage.input_tokens, output_tokens: message.usage.output_tokens } : null,
      };
    }
    // A gateway or local server may need no key; the SDK insists on one, so a placeholder stands in.
    const client = new OpenAI({ ...common, apiKey: settings.apiKey ?? 'none', adminAPIKey: null, organization: null, project: null, webhookSecret: null, baseURL: settings.baseUrl });
    const completion = await client.chat.completions.create({
      model: settings.model,
      max_completion_tokens: MAX_OUTPUT_TOKENS,
      messages: [
        { role: 'system', content: request.system },
        { role: 'user', content: request.user },
      ],
      response_format: { type: 'json_schema', json_schema: { name: request.name, schema: request.schema, strict: false } },
    });
    const content = completion.choices[0]?.message?.content ?? '';
    let output: unknown;
    try {
      output = JSON.parse(content);
    } catch {
      output = undefined;
    }
    return {
      output,
      raw: content,
      usage: completion.usage ? { input_tokens: completion.usage.prompt_tokens, output_tokens: completion.usage.completion_tokens } : null,
    };
  } catch (err) {
    throw new ProviderFailure(categoryOf(err, failed));
  }
}
