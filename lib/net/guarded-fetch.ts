// The one outbound HTTP client of Plumb (favicons and webhooks today; OIDC, AI providers later). A URL
// from outside must not become a way into our own network, so: the host is resolved once, every
// address it resolves to is checked (lib/net/addresses.ts), the socket is pinned to the checked
// address (a second, different DNS answer cannot slip in: no rebinding), redirects are returned,
// never followed, one deadline covers DNS, connect, headers and body, the body is capped, and
// proxy settings from the environment are never used.
import { lookup as dnsLookup } from 'node:dns/promises';
import { Agent as HttpAgent, type IncomingHttpHeaders, type IncomingMessage, request as httpRequest, type RequestOptions } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { LookupAddress } from 'node:dns';
import { type AddressCheck, checkAddress } from './addresses.ts';

export interface GuardedRequestOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Whole request, DNS to last body byte. Required: no outbound request waits forever. */
  timeoutMs: number;
  /** Largest body accepted; the request is aborted as soon as more arrives. */
  maxBytes: number;
  /** Permit loopback/private/reserved destinations (tests, explicitly flagged development setups). */
  allowPrivate?: boolean;
  /** Name resolution (tests point names at chosen addresses); default: the system resolver, all addresses. */
  resolver?: (host: string) => Promise<string[]>;
  /** Trusted CA certificates for https instead of the default store (a test receiver's own CA). */
  ca?: string | Buffer;
}

export interface GuardedResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export type OutboundFailure = 'invalid_url' | 'dns' | 'blocked_address' | 'timeout' | 'too_large' | 'network';

/** Why an outbound request did not produce a response; `kind` is safe to store and show. */
export class OutboundError extends Error {
  readonly kind: OutboundFailure;
  constructor(kind: OutboundFailure, message: string) {
    super(message);
    this.name = 'OutboundError';
    this.kind = kind;
  }
}

const systemResolver = async (host: string) => (await dnsLookup(host, { all: true, verbatim: true })).map((a) => a.address);

/** The checked address to connect to; throws unless every address the host has may be reached. */
async function resolveChecked(url: URL, options: Pick<GuardedRequestOptions, 'allowPrivate' | 'resolver'>): Promise<AddressCheck> {
  // URL keeps IPv6 literals in brackets; an IP literal is its own (only) address.
  const literal = checkAddress(url.hostname);
  let candidates: AddressCheck[];
  if (literal) {
    candidates = [literal];
  } else {
    let addresses: string[];
    try {
      addresses = await (options.resolver ?? systemResolver)(url.hostname);
    } catch (err) {
      throw new OutboundError('dns', `Cannot resolve ${url.hostname}: ${(err as Error).message}`);
    }
    candidates = addresses.map((address) => {
      const checked = checkAddress(address);
      if (!checked) throw new OutboundError('dns', `${url.hostname} resolved to something that is not an IP address`);
      return checked;
    });
    if (candidates.length === 0) throw new OutboundError('dns', `${url.hostname} has no addresses`);
  }
  // One refused address refuses the host: otherwise an attacker's name could list a public
  // address next to an internal one and win whenever the internal one is picked.
  const refused = options.allowPrivate ? undefined : candidates.find((c) => !c.public);
  if (refused) throw new OutboundError('blocked_address', `${url.hostname} resolves to a ${refused.range} address, which outbound requests may not reach`);
  return candidates[0];
}

function checkUrl(url: URL): void {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new OutboundError('invalid_url', `Only http and https URLs can be requested, not ${url.protocol}`);
  if (url.username || url.password) throw new OutboundError('invalid_url', 'URLs with credentials are not requested');
  if (!url.hostname) throw new OutboundError('invalid_url', 'The URL has no host');
}

/**
 * Resolves and checks a destination without sending anything (webhook URLs are checked when they
 * are configured, and again by guardedRequest before each delivery). Throws OutboundError like
 * guardedRequest; answers the address a request would connect to.
 */
export async function checkDestination(url: URL, options: Pick<GuardedRequestOptions, 'allowPrivate' | 'resolver' | 'timeoutMs'>): Promise<AddressCheck> {
  checkUrl(url);
  const deadline = AbortSignal.timeout(options.timeoutMs);
  return untilAborted(resolveChecked(url, options), deadline, () => new OutboundError('timeout', `Resolving ${url.hostname} took longer than ${options.timeoutMs} ms`));
}

/**
 * Sends one request and returns its response as it came: any status, 3xx included. Throws
 * OutboundError for a bad URL, a refused address, DNS failure, the deadline, an oversized body or a
 * network error.
 */
export async function guardedRequest(url: URL, options: GuardedRequestOptions): Promise<GuardedResponse> {
  checkUrl(url);
  if (!(options.timeoutMs > 0) || !(options.maxBytes >= 0)) throw new TypeError('guardedRequest needs a positive timeoutMs and a maxBytes');
  const deadline = AbortSignal.timeout(options.timeoutMs);
  const late = () => new OutboundError('timeout', `No complete answer from ${url.host} within ${options.timeoutMs} ms`);
  const target = await untilAborted(resolveChecked(url, options), deadline, late);
  return send(url, target, options, deadline, late);
}

/** The lookup cannot be cancelled, but the caller stops waiting for it at the deadline. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal, error: () => OutboundError): Promise<T> {
  if (signal.aborted) return Promise.reject(error());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(error());
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function send(url: URL, target: AddressCheck, options: GuardedRequestOptions, deadline: AbortSignal, late: () => OutboundError): Promise<GuardedResponse> {
  const secure = url.protocol === 'https:';
  // A fresh agent per request: no pooled socket from an earlier request (to another address) is
  // reused, and no proxy from HTTP(S)_PROXY / NODE_USE_ENV_PROXY applies (only the global agents
  // carry one; an agent built without proxyEnv connects directly).
  const agent = secure ? new HttpsAgent({ keepAlive: false, ...(options.ca ? { ca: options.ca } : {}) }) : new HttpAgent({ keepAlive: false });
  const pinned = (_host: string, lookupOptions: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (lookupOptions.all) callback(null, [{ address: target.address, family: target.family } satisfies LookupAddress]);
    else callback(null, target.address, target.family);
  };
  const body = options.body === undefined ? undefined : Buffer.from(options.body);
  const headers: Record<string, string> = { ...options.headers };
  if (body && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-length')) headers['Content-Length'] = String(body.length);
  const bareHost = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const requestOptions: RequestOptions & { servername?: string } = {
    method: options.method ?? 'GET',
    protocol: url.protocol,
    // The name, not the address: the Host header and TLS (SNI, certificate check) use it, while
    // `lookup` makes the socket go to the address checked above.
    hostname: bareHost,
    port: url.port || (secure ? 443 : 80),
    path: `${url.pathname}${url.search}`,
    headers,
    agent,
    lookup: pinned as unknown as RequestOptions['lookup'],
  };
  // SNI carries names only, never IP literals.
  if (secure && !checkAddress(url.hostname)) requestOptions.servername = bareHost;

  return new Promise<GuardedResponse>((resolve, reject) => {
    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      deadline.removeEventListener('abort', onDeadline);
      agent.destroy();
      outcome();
    };
    const fail = (err: OutboundError) =>
      settle(() => {
        req.destroy();
        reject(err);
      });
    const onDeadline = () => fail(late());
    const req = (secure ? httpsRequest : httpRequest)(requestOptions, (res: IncomingMessage) => {
      const declared = Number(res.headers['content-length']);
      if (Number.isFinite(declared) && declared > options.maxBytes) {
        fail(new OutboundError('too_large', `The answer from ${url.host} declares ${declared} bytes; at most ${options.maxBytes} are read`));
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > options.maxBytes) fail(new OutboundError('too_large', `The answer from ${url.host} exceeds ${options.maxBytes} bytes`));
        else chunks.push(chunk);
      });
      res.on('end', () => settle(() => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks, size) })));
      res.on('error', (err: Error) => fail(new OutboundError('network', `Reading the answer from ${url.host} failed: ${err.message}`)));
      res.on('aborted', () => fail(new OutboundError('network', `${url.host} closed the connection mid-answer`)));
    });
    req.on('error', (err: Error) => fail(new OutboundError('network', `Request to ${url.host} failed: ${err.message}`)));
    if (deadline.aborted) onDeadline();
    else deadline.addEventListener('abort', onDeadline, { once: true });
    req.end(body);
  });
}
