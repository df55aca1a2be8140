// One MCP request answered by the SDK's own server and Streamable HTTP transport, stateless: a new
// server and transport per POST, no session id, JSON answers rather than event streams, so any
// node of a cluster answers any request. Loaded on a node's first /mcp request (lib/mcp/endpoint.ts),
// so a node that never serves MCP never loads the SDK.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { BRAND, VERSION } from '../brand.ts';
import { type ErrorCode, PlumbError } from '../errors.ts';
import { renderError } from '../http/error-response.ts';
import type { Log } from '../log.ts';
import { outputSchemaOf, TOOLS, type ToolName, type ToolSpec } from './tools.ts';

/** Runs a tool for the caller (the mcp service's action of that name). */
export type ToolRunner = (name: ToolName, args: Record<string, unknown>) => Promise<unknown>;

const INSTRUCTIONS = `Read-only web analytics of the sites this token can read. Start with list_sites for the site_id every other tool needs. Ranges take YYYY-MM-DD dates (whole days in the site's time zone, both ends included) and default to the last 30 days.`;

/** The transport's refusals by status, as the error codes every other route answers with. */
const TRANSPORT_CODES: Record<number, ErrorCode> = {
  400: 'bad_request',
  403: 'forbidden',
  404: 'not_found',
  406: 'not_acceptable',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
};

const toolError = (message: string): CallToolResult => ({ content: [{ type: 'text', text: message }], isError: true });

function serverFor(run: ToolRunner, log: Log): McpServer {
  const server = new McpServer({ name: BRAND, version: VERSION }, { instructions: INSTRUCTIONS });
  for (const [name, spec] of Object.entries(TOOLS) as [ToolName, ToolSpec][]) {
    const config = {
      title: spec.title,
      description: spec.description,
      inputSchema: spec.input,
      outputSchema: outputSchemaOf(name),
      annotations: { readOnlyHint: true, openWorldHint: false },
    };
    server.registerTool(name, config, async (args: Record<string, unknown>): Promise<CallToolResult> => {
      try {
        const answer = (await run(name, args)) as Record<string, unknown>;
        // The JSON in the text too: many clients hand only the text content to the model.
        return { content: [{ type: 'text', text: `${spec.summary(answer)}\n${JSON.stringify(answer)}` }], structuredContent: answer };
      } catch (err) {
        // The answer an HTTP client would get, as a tool error the assistant can read and act on.
        const { status, body } = renderError(err as Error);
        if (status >= 500) log.error({ err, tool: name }, 'mcp: a tool failed');
        return toolError(body.message);
      }
    });
  }
  return server;
}

/**
 * The answer to one POST /mcp whose caller is already authenticated. The transport's own refusals
 * (a missing Accept type, a message that is not JSON-RPC, an unknown protocol version) are thrown
 * as PlumbErrors, so they leave in the one error format of every route.
 */
export async function answerMcpRequest(request: Request, body: unknown, run: ToolRunner, log: Log): Promise<Response> {
  const server = serverFor(run, log);
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  try {
    const response = await transport.handleRequest(request, { parsedBody: body });
    if (response.status >= 400) {
      const refusal = (await response.json().catch(() => undefined)) as { error?: { message?: string } } | undefined;
      throw new PlumbError(response.status, TRANSPORT_CODES[response.status] ?? 'internal_error', refusal?.error?.message ?? 'The MCP request was refused');
    }
    return response;
  } finally {
    await transport.close();
    await server.close();
  }
}
