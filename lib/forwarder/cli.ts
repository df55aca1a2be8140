// The command line of `plumb forward-ai-fetches`: its flags, the token from a file or the
// environment, and the exit codes (0 done or stopped by a signal, 1 refused by the server or a
// state file it cannot read, 2 a usage error, 3 the server did not take a batch within --retries).
import { readFile } from 'node:fs/promises';
import { envName } from '../brand.ts';
import { MAX_BATCH_ITEMS } from '../ingest/schemas.ts';
import { LOG_FORMATS, type LogFormat } from './formats/index.ts';
import { type ForwarderOptions, forwardAiFetches } from './forwarder.ts';
import { ForwarderStop, ServerUnavailable } from './sender.ts';
import { StateFileError } from './state.ts';

export const FORWARD_TOKEN_ENV = envName('FORWARD_TOKEN');
const MAX_RETRIES = 1000;

export const FORWARD_USAGE = `Usage: plumb forward-ai-fetches --url <plumb url> --site <site id> --format <format> [flags] <log>...

Follows web-server logs and sends the requests of AI crawlers and assistants (the agents of
Plumb's catalog) to POST /api/sites/<site id>/ingest/ai-fetch. Other lines are skipped.

  --url <url>          the Plumb instance, e.g. https://plumb.example
  --site <id>          the site's id
  --token-file <path>  a file holding an API-client token with ai-fetch:write on the site
                       (or the token in ${FORWARD_TOKEN_ENV})
  --format <format>    ${LOG_FORMATS.join(' | ')}
                       nginx, apache: the combined log format, optionally followed by the response
                       time and content type (nginx: $request_time "$sent_http_content_type";
                       apache: %D "%{Content-Type}o"); caddy: its JSON access log; cloudfront:
                       standard logs; jsonl: one JSON object per line with the route's field names
  --state <file>       where the position in each log is kept (default: <log>.plumb-state)
  --batch <n>          fetches per request, 1 to ${MAX_BATCH_ITEMS} (default 500)
  --flush-ms <ms>      send a partial batch after this long (default 2000)
  --once               read the logs to their end, send, and exit (for cron)
  --retries <n>        how often a failed send is retried (with backoff from 1 s) before giving
                       up, 0 to ${MAX_RETRIES} (default: 5 with --once, for ever without)
  -h, --help           this help

Rotation is followed (a new file at the path, or the file truncated); the position is saved only
after the server accepted a batch, and each batch carries an Idempotency-Key, so a restart neither
loses nor doubles a line. A batch too large for the server (413) is sent in halves; fetches it
refuses as invalid are logged and skipped, those it cannot take for now are sent again.
Exit status: 0 done, 1 refused by the server, 2 usage error, 3 gave up after --retries (the
lines not stored are sent again by the next run).
`;

class UsageError extends Error {}

interface ParsedArgs {
  url: string;
  siteId: string;
  format: LogFormat;
  tokenFile?: string;
  statePath?: string;
  batchSize: number;
  flushMs: number;
  once: boolean;
  maxRetries?: number;
  logs: string[];
}

const VALUE_FLAGS = new Set(['url', 'site', 'token-file', 'format', 'state', 'batch', 'flush-ms', 'retries']);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function integer(flag: string, text: string, min: number, max: number): number {
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < min || value > max) throw new UsageError(`--${flag} must be a whole number from ${min} to ${max}`);
  return value;
}

export function parseForwardArgs(argv: readonly string[]): ParsedArgs | 'help' {
  const values = new Map<string, string>();
  const logs: string[] = [];
  let once = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '-h' || arg === '--help') return 'help';
    const flag = /^--?([a-z-]+)(?:=(.*))?$/s.exec(arg);
    if (!flag) {
      logs.push(arg);
      continue;
    }
    const [, name, inline] = flag;
    if (name === 'once' && inline === undefined) {
      once = true;
      continue;
    }
    if (!VALUE_FLAGS.has(name)) throw new UsageError(`unknown flag ${arg}`);
    const value = inline ?? argv[++i];
    if (value === undefined || value === '') throw new UsageError(`--${name} needs a value`);
    values.set(name, value);
  }
  const url = values.get('url');
  const siteId = values.get('site');
  const format = values.get('format');
  if (!url || !/^https?:\/\/[^/]/i.test(url) || !URL.canParse(url)) throw new UsageError('--url must be the http(s) address of the Plumb instance');
  if (!siteId || !UUID.test(siteId)) throw new UsageError('--site must be the site’s id (a UUID)');
  if (!format || !(LOG_FORMATS as readonly string[]).includes(format)) throw new UsageError(`--format must be one of ${LOG_FORMATS.join(', ')}`);
  if (logs.length === 0) throw new UsageError('name at least one log file');
  return {
    url,
    siteId,
    format: format as LogFormat,
    tokenFile: values.get('token-file'),
    statePath: values.get('state'),
    batchSize: values.has('batch') ? integer('batch', values.get('batch') as string, 1, MAX_BATCH_ITEMS) : 500,
    flushMs: values.has('flush-ms') ? integer('flush-ms', values.get('flush-ms') as string, 0, 3_600_000) : 2000,
    once,
    ...(values.has('retries') ? { maxRetries: integer('retries', values.get('retries') as string, 0, MAX_RETRIES) } : {}),
    logs,
  };
}

async function tokenOf(args: ParsedArgs, env: NodeJS.ProcessEnv): Promise<string> {
  let token: string | undefined;
  if (args.tokenFile) {
    try {
      token = (await readFile(args.tokenFile, 'utf8')).trim();
    } catch (err) {
      throw new UsageError(`cannot read --token-file ${args.tokenFile}: ${(err as Error).message}`);
    }
  } else {
    token = env[FORWARD_TOKEN_ENV]?.trim();
  }
  if (!token) throw new UsageError(`give the API-client token in --token-file or ${FORWARD_TOKEN_ENV}`);
  return token;
}

const say = (line: string) => process.stderr.write(`plumb forward-ai-fetches: ${line}\n`);

/** Runs the command; resolves with the exit status. SIGTERM and SIGINT stop it between batches. */
export async function forwardAiFetchesCommand(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  let options: ForwarderOptions;
  const stop = new AbortController();
  try {
    const args = parseForwardArgs(argv);
    if (args === 'help') {
      process.stdout.write(FORWARD_USAGE);
      return 0;
    }
    const { tokenFile: _, ...rest } = args;
    options = { ...rest, token: await tokenOf(args, env), signal: stop.signal, report: say };
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    say(`${err.message} (see plumb forward-ai-fetches --help)`);
    return 2;
  }
  const onSignal = () => stop.abort(new Error('stopped by a signal'));
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  try {
    const stats = await forwardAiFetches(options);
    say(`${stats.lines} lines read: ${stats.accepted} AI fetches stored, ${stats.rejected} refused, ${stats.otherAgents} other agents, ${stats.malformed} unreadable`);
    return 0;
  } catch (err) {
    if (err instanceof ForwarderStop || err instanceof StateFileError) {
      say(err.message);
      return 1;
    }
    if (err instanceof ServerUnavailable) {
      say(err.message);
      return 3;
    }
    throw err;
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  }
}
