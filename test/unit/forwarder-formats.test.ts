// The log formats of `plumb forward-ai-fetches`: each parser turns a line into a fetch in the
// ingest route's field names, ignores what is no request, and calls anything else malformed
// rather than throwing, whatever the line holds.
import { describe, expect, it } from '@jest/globals';
import { createLineParser, type LogFormat } from '../../lib/forwarder/formats/index.ts';

const GPTBOT = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)';
const parse = (format: LogFormat, line: string) => createLineParser(format).parse(line);

/** Lines no parser may throw on. */
const HOSTILE = [
  '',
  '\u0000\u0001\u0002',
  '"'.repeat(5000),
  '\\'.repeat(5000),
  '{"request":',
  '[1,2,3]',
  'null',
  '{"__proto__":{"polluted":true},"user_agent":"x"}',
  '\ud800 lone surrogate',
  `${'a '.repeat(20_000)}`,
  '\t\t\t\t\t\t\t\t\t\t\t',
];

describe('nginx combined log format', () => {
  const line = (request: string, extra = '') =>
    `203.0.113.7 - - [10/Jan/2026:11:30:05 +0100] "${request}" 200 5120 "https://example.com/" "${GPTBOT}"${extra}`;

  it('reads the path, status, bytes, user agent, and the local time as UTC', () => {
    expect(parse('nginx', line('GET /docs/guide?lang=en HTTP/1.1'))).toEqual({
      kind: 'fetch',
      fetch: { path: '/docs/guide?lang=en', status_code: 200, bytes: 5120, user_agent: GPTBOT, timestamp: '2026-01-10T10:30:05.000Z' },
    });
  });

  it('reads the response time in seconds and the content type written after the user agent', () => {
    expect(parse('nginx', line('GET /a HTTP/2.0', ' 0.042 "text/html; charset=utf-8"'))).toMatchObject({
      fetch: { path: '/a', response_time_ms: 42, content_type: 'text/html; charset=utf-8' },
    });
  });

  it('leaves alone fields it does not know after the user agent (nginx’s "main" adds X-Forwarded-For)', () => {
    expect(parse('nginx', line('GET /a HTTP/1.1', ' "198.51.100.1"'))).toEqual({ kind: 'fetch', fetch: expect.not.objectContaining({ response_time_ms: expect.anything() }) });
  });

  it('decodes nginx’s \\xHH escapes, a UTF-8 character from several', () => {
    const escaped = `203.0.113.7 - - [10/Jan/2026:11:30:05 +0000] "GET /caf\\xC3\\xA9 HTTP/1.1" 200 1 "-" "ClaudeBot/1.0 \\x22quoted\\x22"`;
    expect(parse('nginx', escaped)).toMatchObject({ fetch: { path: '/café', user_agent: 'ClaudeBot/1.0 "quoted"' } });
  });

  it('takes an absolute request target as the url', () => {
    expect(parse('nginx', line('GET https://example.com/docs HTTP/1.1'))).toMatchObject({ fetch: { url: 'https://example.com/docs' } });
  });

  it.each([
    ['a TLS handshake sent to the HTTP port', line('\\x16\\x03\\x01\\x02\\x00\\x01\\x00\\x01\\xFC\\x03\\x03')],
    ['an empty request', line('-')],
    ['a request with no target', line('GET')],
    ['a time that is no date', line('GET / HTTP/1.1').replace('10/Jan/2026', '31/Feb/2026')],
    ['a truncated line', line('GET / HTTP/1.1').slice(0, 60)],
    ['the common log format without referer and user agent', '203.0.113.7 - - [10/Jan/2026:11:30:05 +0100] "GET / HTTP/1.1" 200 5120'],
  ])('calls %s malformed', (_name, text) => {
    expect(parse('nginx', text)).toEqual({ kind: 'malformed' });
  });

  it('never throws on hostile lines', () => {
    for (const text of HOSTILE) expect(['malformed', 'ignored']).toContain(parse('nginx', text).kind);
  });
});

describe('Apache combined log format', () => {
  it('reads Apache’s \\" escapes, "-" for no bytes, and %D in microseconds', () => {
    const text = `203.0.113.7 - frank [10/Jan/2026:11:30:05 -0500] "GET /report.pdf HTTP/1.1" 304 - "-" "PerplexityBot/1.0 \\"x\\"" 1500 "application/pdf"`;
    expect(parse('apache', text)).toEqual({
      kind: 'fetch',
      fetch: { path: '/report.pdf', status_code: 304, bytes: 0, user_agent: 'PerplexityBot/1.0 "x"', timestamp: '2026-01-10T16:30:05.000Z', response_time_ms: 2, content_type: 'application/pdf' },
    });
  });
});

describe('Caddy JSON access log', () => {
  const entry = (extra: Record<string, unknown> = {}) =>
    JSON.stringify({
      level: 'info',
      ts: 1768044605.25,
      logger: 'http.log.access.log0',
      msg: 'handled request',
      request: { remote_ip: '203.0.113.7', method: 'GET', host: 'example.com', uri: '/docs?x=1', headers: { 'User-Agent': [GPTBOT], Accept: ['*/*'] } },
      bytes_read: 0,
      duration: 0.0123,
      size: 5120,
      status: 200,
      resp_headers: { 'Content-Type': ['text/html; charset=utf-8'] },
      ...extra,
    });

  it('reads uri, User-Agent, status, size, duration in seconds, the content type and ts in Unix seconds', () => {
    expect(parse('caddy', entry())).toEqual({
      kind: 'fetch',
      fetch: { path: '/docs?x=1', status_code: 200, bytes: 5120, user_agent: GPTBOT, timestamp: '2026-01-10T11:30:05.250Z', response_time_ms: 12, content_type: 'text/html; charset=utf-8' },
    });
  });

  it('reads ts written as ISO 8601 (Go’s layout, offset without a colon) and a Go duration string', () => {
    expect(parse('caddy', entry({ ts: '2026-01-10T12:30:05.250+0100', duration: '1m2.5s' }))).toMatchObject({
      fetch: { timestamp: '2026-01-10T11:30:05.250Z', response_time_ms: 62_500 },
    });
  });

  it('ignores the lines of Caddy’s other loggers', () => {
    expect(parse('caddy', JSON.stringify({ level: 'info', ts: 1768044605, logger: 'tls', msg: 'certificate obtained' }))).toEqual({ kind: 'ignored' });
  });

  it.each([
    ['status 0 (closed before any answer)', entry({ status: 0 })],
    ['no User-Agent header', entry({ request: { uri: '/', headers: {} } })],
    ['a uri that is no path', entry({ request: { uri: '*', headers: { 'User-Agent': [GPTBOT] } } })],
    ['a ts that is no time', entry({ ts: 'yesterday' })],
    ['a line cut short', entry().slice(0, 80)],
  ])('calls an entry with %s malformed', (_name, text) => {
    expect(parse('caddy', text)).toEqual({ kind: 'malformed' });
  });

  it('never throws on hostile lines', () => {
    for (const text of HOSTILE) expect(['malformed', 'ignored']).toContain(parse('caddy', text).kind);
  });
});

describe('CloudFront standard log', () => {
  const FIELDS = '#Fields: date time x-edge-location sc-bytes c-ip cs-method cs(Host) cs-uri-stem sc-status cs(Referer) cs(User-Agent) cs-uri-query cs(Cookie) x-edge-result-type x-edge-request-id x-host-header cs-protocol cs-bytes time-taken x-forwarded-for ssl-protocol ssl-cipher x-edge-response-result-type cs-protocol-version fle-status fle-encrypted-fields c-port time-to-first-byte x-edge-detailed-result-type sc-content-type sc-content-len sc-range-start sc-range-end';
  const row = (ua = 'Mozilla/5.0%20(compatible;%20ClaudeBot/1.0;%20+claudebot@anthropic.com)') =>
    ['2026-01-10', '11:30:05', 'AMS1-C1', '5120', '203.0.113.7', 'GET', 'd111111abcdef8.cloudfront.net', '/docs/guide', '200', '-', ua, 'lang=en', '-', 'Hit', 'id==', 'example.com', 'https', '120', '0.034', '-', 'TLSv1.3', 'TLS_AES_128_GCM_SHA256', 'Hit', 'HTTP/2.0', '-', '-', '443', '0.030', 'Hit', 'text/html', '5000', '-', '-'].join('\t');

  it('reads the columns the #Fields header names, decoding the user agent', () => {
    const parser = createLineParser('cloudfront');
    expect(parser.parse('#Version: 1.0')).toEqual({ kind: 'ignored' });
    expect(parser.parse(FIELDS)).toEqual({ kind: 'ignored' });
    expect(parser.parse(row())).toEqual({
      kind: 'fetch',
      fetch: {
        path: '/docs/guide',
        status_code: 200,
        bytes: 5120,
        user_agent: 'Mozilla/5.0 (compatible; ClaudeBot/1.0; +claudebot@anthropic.com)',
        timestamp: '2026-01-10T11:30:05.000Z',
        response_time_ms: 34,
        content_type: 'text/html',
      },
    });
  });

  it('follows a #Fields header that orders the columns otherwise', () => {
    const parser = createLineParser('cloudfront');
    parser.parse('#Fields: cs(User-Agent) sc-status cs-uri-stem time date');
    expect(parser.parse(['GPTBot/1.2', '404', '/missing', '23:59:59', '2026-01-10'].join('\t'))).toEqual({
      kind: 'fetch',
      fetch: { path: '/missing', status_code: 404, user_agent: 'GPTBot/1.2', timestamp: '2026-01-10T23:59:59.000Z' },
    });
  });

  it('reads a file whose header it did not see with the standard columns', () => {
    expect(parse('cloudfront', row())).toMatchObject({ kind: 'fetch', fetch: { path: '/docs/guide' } });
  });

  it('keeps a % that starts no UTF-8 sequence as written', () => {
    expect(parse('cloudfront', row('GPTBot/1.2%20100%%20sure%E2'))).toMatchObject({ fetch: { user_agent: 'GPTBot/1.2 100% sure%E2' } });
  });

  it.each([
    ['too few columns', '2026-01-10\t11:30:05\tAMS1'],
    ['a date that is no date', row().replace('2026-01-10', 'yesterday')],
    ['a status that is no number', row().replace('\t200\t', '\tOK\t')],
  ])('calls a row with %s malformed', (_name, text) => {
    expect(parse('cloudfront', text)).toEqual({ kind: 'malformed' });
  });

  it('never throws on hostile lines', () => {
    for (const text of HOSTILE) expect(['malformed', 'ignored']).toContain(parse('cloudfront', text).kind);
  });
});

describe('JSON lines in Plumb’s field names', () => {
  it('passes on the route’s fields only, for the server to judge', () => {
    const text = JSON.stringify({ path: '/docs', status_code: 200, user_agent: GPTBOT, timestamp: '2026-01-10T10:00:00Z', bytes: 10, host: 'example.com', ip: '203.0.113.7' });
    expect(parse('jsonl', text)).toEqual({ kind: 'fetch', fetch: { path: '/docs', status_code: 200, user_agent: GPTBOT, timestamp: '2026-01-10T10:00:00Z', bytes: 10 } });
  });

  it.each([
    ['an array', '[{"user_agent":"GPTBot"}]'],
    ['an object without a user agent', '{"path":"/"}'],
    ['a user agent that is no string', '{"path":"/","user_agent":7}'],
    ['text', 'GPTBot fetched /'],
  ])('calls %s malformed', (_name, text) => {
    expect(parse('jsonl', text)).toEqual({ kind: 'malformed' });
  });

  it('never throws on hostile lines, and copies no prototype', () => {
    for (const text of HOSTILE) expect(['malformed', 'ignored', 'fetch']).toContain(parse('jsonl', text).kind);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
