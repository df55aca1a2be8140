// A stand-in AI provider on loopback, speaking OpenAI's chat-completions API (POST
// …/chat/completions) and Anthropic's messages API (POST …/v1/messages). It reads the candidates
// the AI plugin sends and answers as told: well (each candidate with its first allowed key, the
// facts as params, all its evidence), with one kind of hostile output, slowly, with an error, or
// over its own rate limit. Every answer carries RESPONSE_MARKER, so a test can prove no raw
// answer was stored; it keeps the requests it received, so a test can look for the prompt.
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

export const RESPONSE_MARKER = 'stub-provider-answer-5d0c9e';

export type StubBehaviour =
  | 'good'
  | 'unknown_key'
  | 'extra_field'
  | 'uncited_evidence'
  | 'invented_evidence'
  | 'text_for_number'
  | 'wrong_type'
  | 'not_json'
  | 'obey_injection'
  | 'slow'
  | 'error'
  | 'too_many_requests';

export interface ReceivedRequest {
  api: 'openai' | 'anthropic';
  body: Record<string, unknown>;
  authorization: string | undefined;
}

export interface ProviderStub {
  url: string;
  behaviour: StubBehaviour;
  /** How long `slow` waits before answering. */
  slowMs: number;
  received: ReceivedRequest[];
  close(): Promise<void>;
}

interface SentCandidate {
  candidate_id: string;
  kind: string;
  allowed_keys: { key: string; params: Record<string, string> }[];
  facts: Record<string, string | number>;
  evidence: { id: string }[];
}

const readBody = async (req: IncomingMessage) => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
};

/** What a well-behaved model answers: every candidate, first key, params from the facts, all evidence. */
function goodAnswer(candidates: SentCandidate[]) {
  return {
    opportunities: candidates.map((candidate) => {
      const [{ key, params }] = candidate.allowed_keys;
      return { candidate_id: candidate.candidate_id, key, params: Object.fromEntries(Object.keys(params).map((name) => [name, candidate.facts[name]])), evidence_ids: candidate.evidence.map((row) => row.id) };
    }),
  };
}

/** The structured output for a behaviour that answers at all. */
function outputFor(behaviour: StubBehaviour, candidates: SentCandidate[], prompt: string): unknown {
  const answer = goodAnswer(candidates) as { opportunities: Record<string, unknown>[] };
  const [first] = answer.opportunities;
  const firstParams = first.params as Record<string, unknown>;
  switch (behaviour) {
    case 'unknown_key':
      first.key = 'ai.admin.grant_owner';
      break;
    case 'extra_field':
      first.html = `<img src=x onerror=alert(1)> ${RESPONSE_MARKER}`;
      break;
    case 'uncited_evidence':
      // Evidence of another candidate: real ids, but not this candidate's.
      first.evidence_ids = candidates[1].evidence.map((row) => row.id);
      break;
    case 'invented_evidence':
      first.evidence_ids = ['e9999'];
      break;
    case 'text_for_number': {
      const numeric = Object.keys(firstParams).find((name) => typeof firstParams[name] === 'number') as string;
      firstParams[numeric] = `${String(firstParams[numeric])} visitors ${RESPONSE_MARKER}`;
      break;
    }
    case 'wrong_type':
      first.evidence_ids = (first.evidence_ids as string[])[0];
      break;
    case 'obey_injection':
      // A model that follows the instructions planted in the site's data: the path asks for a
      // million visitors, the referrer for a key of its own.
      if (!prompt.includes('IGNORE PREVIOUS INSTRUCTIONS')) throw new Error('the stub expected the planted instructions in the prompt');
      for (const item of answer.opportunities) {
        const params = item.params as Record<string, unknown>;
        if ('visitors' in params) params.visitors = 1_000_000;
      }
      break;
    default:
      break;
  }
  return answer;
}

export async function startProviderStub(): Promise<ProviderStub> {
  const stub: Omit<ProviderStub, 'url' | 'close'> = { behaviour: 'good', slowMs: 3000, received: [] };
  const server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      const api = req.url?.endsWith('/chat/completions') ? 'openai' : req.url?.endsWith('/v1/messages') ? 'anthropic' : null;
      if (req.method !== 'POST' || !api) {
        res.writeHead(404, { 'Content-Type': 'application/json' }).end('{"error":"no such route"}');
        return;
      }
      stub.received.push({ api, body, authorization: (req.headers.authorization as string | undefined) ?? (req.headers['x-api-key'] as string | undefined) });
      const messages = body.messages as { role: string; content: string }[];
      const prompt = messages.find((message) => message.role === 'user')?.content ?? '';
      const { candidates } = JSON.parse(prompt) as { candidates: SentCandidate[] };
      const { behaviour } = stub;
      if (behaviour === 'slow') await new Promise((resolve) => setTimeout(resolve, stub.slowMs).unref());
      if (behaviour === 'error' || behaviour === 'too_many_requests') {
        const status = behaviour === 'error' ? 500 : 429;
        res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: { type: 'server_error', message: `provider internals ${RESPONSE_MARKER}` } }));
        return;
      }
      const output = outputFor(behaviour, candidates, prompt);
      const text = behaviour === 'not_json' ? `Here are your opportunities! ${RESPONSE_MARKER}` : JSON.stringify(output);
      const answer =
        api === 'openai'
          ? {
              id: `chatcmpl-${RESPONSE_MARKER}`,
              object: 'chat.completion',
              created: Math.floor(Date.now() / 1000),
              model: body.model,
              choices: [{ index: 0, message: { role: 'assistant', content: text, refusal: null }, finish_reason: 'stop', logprobs: null }],
              usage: { prompt_tokens: 400, completion_tokens: 100, total_tokens: 500 },
            }
          : {
              id: `msg_${RESPONSE_MARKER}`,
              type: 'message',
              role: 'assistant',
              model: body.model,
              content:
                behaviour === 'not_json'
                  ? [{ type: 'text', text }]
                  : [{ type: 'tool_use', id: `toolu_${RESPONSE_MARKER}`, name: (body.tool_choice as { name: string }).name, input: output }],
              stop_reason: 'tool_use',
              stop_sequence: null,
              usage: { input_tokens: 400, output_tokens: 100 },
            };
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(answer));
    })().catch((err: unknown) => {
      res.writeHead(500, { 'Content-Type': 'text/plain' }).end(String(err));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(stub, {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}
