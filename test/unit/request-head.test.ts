// readRequestHead: the strict subset of HTTP/1.1 the direct path frames itself. Anything doubtful
// is `other` (Node's HTTP server reads it), so the two never frame one request two ways.
import { describe, expect, it } from '@jest/globals';
import { MAX_DIRECT_HEADERS, readRequestHead } from '../../lib/http/request-head.ts';

const limits = (path: string) => (path === '/ingest' ? 1024 : path === '/ingest/event' ? 2048 : undefined);
const MAX_HEAD = 8192;

/** A request head from its lines: each line ends with CR LF, and a blank line ends the head. */
function head(...lines: string[]): string {
  return lines.map((line) => line + '\r\n').join('') + '\r\n';
}

/** The least request the direct path takes, with extra header lines after Host and Content-Length. */
function minimal(extra: string[] = [], contentLength = '5', target = '/ingest'): string {
  return head(`POST ${target} HTTP/1.1`, 'Host: plumb.example', `Content-Length: ${contentLength}`, ...extra);
}

function read(text: string | Buffer, start = 0) {
  const bytes = typeof text === 'string' ? Buffer.from(text, 'latin1') : text;
  return readRequestHead(bytes, start, limits, MAX_HEAD);
}

function kindOf(text: string | Buffer, start = 0): string {
  return read(text, start).kind;
}

const TRACKER_HEAD = head(
  'POST /ingest HTTP/1.1',
  'Host: plumb.example',
  'Content-Type: text/plain',
  'Content-Length: 42',
  'Origin: https://site.example',
  'User-Agent: Mozilla/5.0 (X11; Linux x86_64) Firefox/128.0',
  'Referer: https://site.example/page',
);

describe('readRequestHead', () => {
  describe('a tracker request', () => {
    it('frames a typical tracker request with lowercased header names and values as sent', () => {
      expect(read(TRACKER_HEAD + 'x'.repeat(42))).toEqual({
        kind: 'direct',
        target: '/ingest',
        path: '/ingest',
        headers: {
          host: 'plumb.example',
          'content-type': 'text/plain',
          'content-length': '42',
          origin: 'https://site.example',
          'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/128.0',
          referer: 'https://site.example/page',
        },
        bodyStart: Buffer.byteLength(TRACKER_HEAD, 'latin1'),
        contentLength: 42,
      });
    });

    it('starts the body right after the blank line, whether or not body bytes have arrived', () => {
      const text = minimal();
      expect(read(text)).toMatchObject({ kind: 'direct', bodyStart: text.length, contentLength: 5 });
      expect(read(text + 'hel')).toMatchObject({ kind: 'direct', bodyStart: text.length, contentLength: 5 });
    });

    it('removes the blanks between the colon and the value', () => {
      const result = read(minimal(['Origin:https://a.example', 'Referer:  \t https://b.example/']));
      expect(result).toMatchObject({ kind: 'direct', headers: { origin: 'https://a.example', referer: 'https://b.example/' } });
    });

    it('gives the path without the query and the target with it', () => {
      expect(read(minimal([], '5', '/ingest?x=1'))).toMatchObject({ kind: 'direct', path: '/ingest', target: '/ingest?x=1' });
      expect(read(minimal([], '5', '/ingest/event?a=%20b&c=d'))).toMatchObject({ kind: 'direct', path: '/ingest/event', target: '/ingest/event?a=%20b&c=d' });
    });
  });

  describe('reading at an offset', () => {
    it('reads a request placed after other bytes, with bodyStart counted from the start of the buffer', () => {
      const before = 'earlier bytes of the connection';
      const text = minimal();
      expect(read(before + text + 'hello', before.length)).toMatchObject({ kind: 'direct', path: '/ingest', bodyStart: before.length + text.length, contentLength: 5 });
    });

    it('reads each of two pipelined requests from where the one before it ends', () => {
      const first = minimal([], '5') + 'hello';
      const second = minimal(['Origin: https://two.example'], '3', '/ingest/event') + 'abc';
      const bytes = Buffer.from(first + second, 'latin1');
      const one = read(bytes, 0);
      expect(one).toMatchObject({ kind: 'direct', path: '/ingest', contentLength: 5 });
      if (one.kind !== 'direct') throw new Error('expected a direct request');
      const next = one.bodyStart + one.contentLength;
      expect(next).toBe(first.length);
      const two = read(bytes, next);
      expect(two).toMatchObject({ kind: 'direct', path: '/ingest/event', contentLength: 3, bodyStart: bytes.length - 3, headers: { origin: 'https://two.example' } });
    });

    it('waits for more bytes when the buffer ends where the next request would start', () => {
      const text = minimal() + 'hello';
      expect(kindOf(text, text.length)).toBe('incomplete');
    });
  });

  describe('a request that arrives in pieces', () => {
    it('waits for more bytes at every split of a valid head, and frames the whole head', () => {
      const bytes = Buffer.from(TRACKER_HEAD, 'latin1');
      for (let length = 1; length < bytes.length; length++) {
        const result = readRequestHead(bytes.subarray(0, length), 0, limits, MAX_HEAD);
        if (result.kind !== 'incomplete') throw new Error(`a prefix of ${length} bytes gave ${result.kind}`);
      }
      expect(readRequestHead(bytes, 0, limits, MAX_HEAD).kind).toBe('direct');
    });

    it('waits for more bytes on an empty buffer', () => {
      expect(kindOf('')).toBe('incomplete');
    });
  });

  describe('the request line', () => {
    it('refuses a method other than POST from its first bytes', () => {
      expect(kindOf('G')).toBe('other');
      expect(kindOf('GET / HTTP/1.1\r\n')).toBe('other');
      expect(kindOf('GET /ingest HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello')).toBe('other');
      expect(kindOf('PU')).toBe('other');
      expect(kindOf(minimal().replace('POST', 'PUT'))).toBe('other');
    });

    it('refuses a lowercase post', () => {
      expect(kindOf('p')).toBe('other');
      expect(kindOf(minimal().replace('POST', 'post'))).toBe('other');
    });

    it('refuses a blank line before the request line', () => {
      expect(kindOf('\r')).toBe('other');
      expect(kindOf('\r\n' + minimal())).toBe('other');
    });

    it('refuses a path it does not serve', () => {
      for (const target of ['/api/x', '/ingestx', '/ingest/', '/INGEST', '/', '/ingest/event/']) {
        expect([target, kindOf(minimal([], '5', target))]).toEqual([target, 'other']);
      }
    });

    it('refuses a target with a fragment', () => {
      expect(kindOf(minimal([], '5', '/ingest#x'))).toBe('other');
      expect(kindOf(minimal([], '5', '/ingest?x=1#y'))).toBe('other');
    });

    it('refuses a target with a space inside', () => {
      expect(kindOf(minimal([], '5', '/ingest x'))).toBe('other');
      expect(kindOf(minimal([], '5', '/ingest?x= 1'))).toBe('other');
    });

    it('refuses a target with a non-ASCII byte', () => {
      expect(kindOf(minimal([], '5', '/ingest?x=\u00e9'))).toBe('other');
      expect(kindOf(minimal([], '5', '/ingest\u00ff'))).toBe('other');
    });

    it('refuses a target with a backslash, an angle bracket or a control byte', () => {
      for (const target of ['/ingest\\', '/ingest?<x>', '/ingest?x=\t', '/ingest?x=\x00', '/ingest?"x"']) {
        expect([target, kindOf(minimal([], '5', target))]).toEqual([target, 'other']);
      }
    });

    it('refuses an absolute-form target', () => {
      expect(kindOf(minimal([], '5', 'http://h/ingest'))).toBe('other');
      expect(kindOf('POST h')).toBe('other');
    });

    it('refuses two spaces between the method and the target', () => {
      expect(kindOf(minimal([], '5', ' /ingest'))).toBe('other');
    });

    it('refuses any version but HTTP/1.1', () => {
      for (const version of ['HTTP/1.0', 'HTTP/2.0', 'HTTP/1.1 ', 'http/1.1', 'HTTP/1.10', 'HTTP/1.1\t', '']) {
        const text = head(`POST /ingest ${version}`, 'Host: h', 'Content-Length: 5');
        expect([version, kindOf(text)]).toEqual([version, 'other']);
      }
    });

    it('refuses a request line without a version', () => {
      expect(kindOf(head('POST /ingest', 'Host: h', 'Content-Length: 5'))).toBe('other');
    });
  });

  describe('body framing', () => {
    it('leaves a request with both Content-Length and Transfer-Encoding to Node', () => {
      expect(kindOf(minimal(['Transfer-Encoding: chunked']))).toBe('other');
    });

    it('leaves a request with Transfer-Encoding before Content-Length to Node', () => {
      expect(kindOf(head('POST /ingest HTTP/1.1', 'Host: h', 'Transfer-Encoding: chunked', 'Content-Length: 5'))).toBe('other');
    });

    it('leaves a request with Transfer-Encoding alone to Node', () => {
      expect(kindOf(head('POST /ingest HTTP/1.1', 'Host: h', 'Transfer-Encoding: chunked'))).toBe('other');
      expect(kindOf(head('POST /ingest HTTP/1.1', 'Host: h', 'transfer-encoding: identity'))).toBe('other');
    });

    it('leaves a request with two Content-Length headers of the same value to Node', () => {
      expect(kindOf(minimal(['Content-Length: 5']))).toBe('other');
      expect(kindOf(minimal(['content-length: 5']))).toBe('other');
    });

    it('leaves a request with two Content-Length headers of different values to Node', () => {
      expect(kindOf(minimal(['Content-Length: 6']))).toBe('other');
    });

    it('refuses a Content-Length with a sign', () => {
      expect(kindOf(minimal([], '+5'))).toBe('other');
      expect(kindOf(minimal([], '-5'))).toBe('other');
    });

    it('refuses a Content-Length with a blank after the digits', () => {
      expect(kindOf(minimal([], '5 '))).toBe('other');
      expect(kindOf(minimal([], '5\t'))).toBe('other');
    });

    it('refuses a Content-Length with a blank among the digits', () => {
      expect(kindOf(minimal([], '1 0'))).toBe('other');
    });

    it('takes more than one blank before a Content-Length as the blanks before any value', () => {
      expect(read(minimal([], ' 5'))).toMatchObject({ kind: 'direct', contentLength: 5, headers: { 'content-length': '5' } });
      expect(read(minimal([], '\t5'))).toMatchObject({ kind: 'direct', contentLength: 5 });
      expect(read(head('POST /ingest HTTP/1.1', 'Host: h', 'Content-Length:5'))).toMatchObject({ kind: 'direct', contentLength: 5 });
    });

    it('refuses a Content-Length list', () => {
      expect(kindOf(minimal([], '5, 5'))).toBe('other');
      expect(kindOf(minimal([], '5,5'))).toBe('other');
    });

    it('refuses a Content-Length in hexadecimal or with a fraction or exponent', () => {
      expect(kindOf(minimal([], '0x5'))).toBe('other');
      expect(kindOf(minimal([], '5.0'))).toBe('other');
      expect(kindOf(minimal([], '5e0'))).toBe('other');
    });

    it('refuses an empty Content-Length', () => {
      expect(kindOf(minimal([], ''))).toBe('other');
      expect(kindOf(head('POST /ingest HTTP/1.1', 'Host: h', 'Content-Length:'))).toBe('other');
    });

    it('refuses a Content-Length of 16 digits', () => {
      expect(kindOf(minimal([], '0000000000000005'))).toBe('other');
      expect(kindOf(minimal([], '1000000000000000'))).toBe('other');
    });

    it('refuses a request without Content-Length', () => {
      expect(kindOf(head('POST /ingest HTTP/1.1', 'Host: h', 'Origin: https://a.example'))).toBe('other');
    });

    it('frames a Content-Length of 0 as an empty body', () => {
      const text = minimal([], '0');
      expect(read(text)).toMatchObject({ kind: 'direct', contentLength: 0, bodyStart: text.length });
    });

    it("refuses a body above the path's limit and takes one of exactly the limit", () => {
      expect(kindOf(minimal([], '1025'))).toBe('other');
      expect(read(minimal([], '1024'))).toMatchObject({ kind: 'direct', contentLength: 1024 });
    });

    it("honours each path's own body limit", () => {
      expect(read(minimal([], '2048', '/ingest/event'))).toMatchObject({ kind: 'direct', path: '/ingest/event', contentLength: 2048 });
      expect(kindOf(minimal([], '2049', '/ingest/event'))).toBe('other');
      expect(kindOf(minimal([], '2048', '/ingest'))).toBe('other');
      expect(kindOf(minimal([], '1025', '/ingest?to=/ingest/event'))).toBe('other');
    });
  });

  describe('header lines', () => {
    it('refuses a blank before the colon', () => {
      expect(kindOf(head('POST /ingest HTTP/1.1', 'Host: h', 'Content-Length : 5'))).toBe('other');
      expect(kindOf(head('POST /ingest HTTP/1.1', 'Host: h', 'Content-Length\t: 5'))).toBe('other');
      expect(kindOf(minimal(['Origin : https://a.example']))).toBe('other');
    });

    it('refuses an obsolete folded line', () => {
      expect(kindOf(minimal(['User-Agent: a', ' b']))).toBe('other');
      expect(kindOf(minimal(['User-Agent: a', '\tb']))).toBe('other');
      expect(kindOf(head('POST /ingest HTTP/1.1', 'Host: h', 'Content-Length:', ' 5'))).toBe('other');
    });

    it('refuses a bare LF ending the request line', () => {
      expect(kindOf('POST /ingest HTTP/1.1\nHost: h\r\nContent-Length: 5\r\n\r\nhello')).toBe('other');
    });

    it('refuses a bare LF ending a header line', () => {
      expect(kindOf('POST /ingest HTTP/1.1\r\nHost: h\nContent-Length: 5\r\n\r\nhello')).toBe('other');
      expect(kindOf('POST /ingest HTTP/1.1\r\nHost: h\r\nX-A: 1\nContent-Length: 5\r\n\r\nhello')).toBe('other');
    });

    it('refuses a bare LF inside a value', () => {
      expect(kindOf(minimal(['User-Agent: a\nb']))).toBe('other');
    });

    it('refuses a bare CR inside a value or ending a line', () => {
      expect(kindOf(minimal(['User-Agent: a\rb']))).toBe('other');
      expect(kindOf('POST /ingest HTTP/1.1\r\nHost: h\rContent-Length: 5\r\n\r\nhello')).toBe('other');
      expect(kindOf(minimal(['\rX: y']))).toBe('other');
    });

    it('refuses a control byte in a value', () => {
      for (const control of ['\x00', '\x01', '\x1f', '\x7f', '\x0b', '\x0c']) {
        const text = minimal([`User-Agent: a${control}b`]);
        expect([control.charCodeAt(0), kindOf(text)]).toEqual([control.charCodeAt(0), 'other']);
      }
      expect(kindOf(minimal(['User-Agent: \x00']))).toBe('other');
    });

    it('refuses a header name with a byte that is not a token byte', () => {
      for (const line of ['Bad Header: x', 'Bad"Name: x', '@x: y', 'Bad(Name): x', 'X/Y: z', 'X\u00e9: y', 'X\x00: y']) {
        expect([line, kindOf(minimal([line]))]).toEqual([line, 'other']);
      }
    });

    it('refuses an empty header name', () => {
      expect(kindOf(minimal([': x']))).toBe('other');
    });

    it('refuses a header line without a colon', () => {
      expect(kindOf(minimal(['NoColon']))).toBe('other');
    });

    it('keeps obs-text in a value as latin1 characters', () => {
      const bytes = Buffer.concat([Buffer.from('POST /ingest HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nUser-Agent: caf', 'latin1'), Buffer.from([0xe9, 0x80, 0xff]), Buffer.from('\r\n\r\n', 'latin1')]);
      expect(read(bytes)).toMatchObject({ kind: 'direct', headers: { 'user-agent': 'caf\u00e9\u0080\u00ff' } });
    });

    it('keeps a tab inside a value', () => {
      expect(read(minimal(['User-Agent: a\tb']))).toMatchObject({ kind: 'direct', headers: { 'user-agent': 'a\tb' } });
    });

    it('refuses a value with blanks after it', () => {
      expect(kindOf(minimal(['User-Agent: a ']))).toBe('other');
      expect(kindOf(minimal(['User-Agent: a\t']))).toBe('other');
      expect(kindOf(head('POST /ingest HTTP/1.1', 'Host: h ', 'Content-Length: 5'))).toBe('other');
    });

    it('keeps an empty value of a header that allows one', () => {
      expect(read(minimal(['Referer:']))).toMatchObject({ kind: 'direct', headers: { referer: '' } });
    });
  });

  describe('headers left to Node', () => {
    const leftToNode = [
      'Expect: 100-continue',
      'Upgrade: websocket',
      'Content-Encoding: gzip',
      'Authorization: Bearer abc',
      'X-API-Key: abc',
      'Proxy-Connection: keep-alive',
      'Connection: close',
      'Connection: upgrade',
      'Connection: keep-alive, close',
      'Connection: keep-alive, Upgrade',
      'Connection:',
      '__proto__: x',
      'constructor: x',
    ];
    for (const line of leftToNode) {
      it(`leaves a request with "${line}" to Node`, () => {
        expect(kindOf(minimal([line]))).toBe('other');
      });
    }

    it('leaves a header left to Node to Node whatever the case of its name', () => {
      expect(kindOf(minimal(['EXPECT: 100-continue']))).toBe('other');
      expect(kindOf(minimal(['authorization: Bearer abc']))).toBe('other');
      expect(kindOf(minimal(['__PROTO__: x']))).toBe('other');
    });

    it('leaves a request with one header name sent twice in different case to Node', () => {
      expect(kindOf(minimal(['Origin: https://a.example', 'origin: https://a.example']))).toBe('other');
      expect(kindOf(head('POST /ingest HTTP/1.1', 'Host: h', 'HOST: h', 'Content-Length: 5'))).toBe('other');
      expect(kindOf(minimal(['Referer:', 'referer: https://a.example/']))).toBe('other');
    });

    it('takes Connection: keep-alive in any case', () => {
      expect(read(minimal(['Connection: keep-alive']))).toMatchObject({ kind: 'direct', headers: { connection: 'keep-alive' } });
      expect(read(minimal(['Connection: Keep-Alive']))).toMatchObject({ kind: 'direct', headers: { connection: 'Keep-Alive' } });
      expect(read(minimal(['connection: KEEP-ALIVE']))).toMatchObject({ kind: 'direct' });
    });

    it('refuses a request without Host', () => {
      expect(kindOf(head('POST /ingest HTTP/1.1', 'Content-Length: 5'))).toBe('other');
    });

    it('refuses a request without any header line', () => {
      expect(kindOf(head('POST /ingest HTTP/1.1'))).toBe('other');
    });
  });

  describe('head size', () => {
    it('refuses a complete head longer than the limit', () => {
      const text = minimal(['Cookie: ' + 'c'.repeat(9000 - minimal().length - 'Cookie: \r\n'.length)]);
      expect(text.length).toBe(9000);
      expect(kindOf(text)).toBe('other');
    });

    it('takes a head of exactly the limit and refuses one a byte longer', () => {
      const filler = (length: number) => minimal(['Cookie: ' + 'c'.repeat(length - minimal().length - 'Cookie: \r\n'.length)]);
      expect(filler(MAX_HEAD).length).toBe(MAX_HEAD);
      expect(kindOf(filler(MAX_HEAD))).toBe('direct');
      expect(kindOf(filler(MAX_HEAD + 1))).toBe('other');
    });

    it('refuses an incomplete head that has reached the limit', () => {
      const start = 'POST /ingest HTTP/1.1\r\nHost: h\r\nCookie: ';
      expect(kindOf(start + 'c'.repeat(MAX_HEAD - start.length))).toBe('other');
      expect(kindOf(start + 'c'.repeat(MAX_HEAD * 2))).toBe('other');
    });

    it('waits for the rest of an incomplete head under the limit', () => {
      const start = 'POST /ingest HTTP/1.1\r\nHost: h\r\nCookie: ';
      expect(kindOf(start + 'c'.repeat(MAX_HEAD - start.length - 1))).toBe('incomplete');
    });

    it('measures the head from the offset it is read at', () => {
      const before = 'x'.repeat(MAX_HEAD);
      const text = minimal();
      expect(read(before + text, before.length)).toMatchObject({ kind: 'direct', bodyStart: before.length + text.length });
      expect(kindOf(before + 'POST /ingest HTTP/1.1\r\n', before.length)).toBe('incomplete');
    });

    it(`takes ${MAX_DIRECT_HEADERS} header lines and refuses one more`, () => {
      const extra = (count: number) => Array.from({ length: count }, (_, i) => `X-H${i}: ${i}`);
      const full = minimal(extra(MAX_DIRECT_HEADERS - 2));
      expect(full.split('\r\n').length - 3).toBe(MAX_DIRECT_HEADERS);
      expect(kindOf(full)).toBe('direct');
      expect(kindOf(minimal(extra(MAX_DIRECT_HEADERS - 1)))).toBe('other');
    });
  });

  describe('the end of the head', () => {
    it('leaves a head ended by two bare LFs to Node at once', () => {
      const text = 'POST /ingest HTTP/1.1\r\nHost: h\r\nContent-Length: 5\n\n';
      expect(kindOf(text)).toBe('other');
      expect(kindOf(text + 'hello')).toBe('other');
    });

    it('leaves a head ended by CR LF LF to Node at once', () => {
      const text = 'POST /ingest HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\n';
      expect(kindOf(text)).toBe('other');
      expect(kindOf(text + 'hello')).toBe('other');
    });

    it('leaves an unfinished head with a bare LF to Node at once', () => {
      expect(kindOf('POST /ingest HTTP/1.1\nHo')).toBe('other');
      expect(kindOf('POST /ingest HTTP/1.1\r\nHost: h\r\n')).toBe('incomplete');
    });

    it('refuses a head ended by bare LFs once a blank line arrives later', () => {
      expect(kindOf('POST /ingest HTTP/1.1\r\nHost: h\r\nContent-Length: 5\n\nhello\r\n\r\n')).toBe('other');
      expect(kindOf('POST /ingest HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\nhello\r\n\r\n')).toBe('other');
      expect(kindOf('POST /ingest HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\nX: y\r\n\r\n')).toBe('other');
    });

    it('refuses a head ended by bare LFs once it reaches the size limit', () => {
      const text = 'POST /ingest HTTP/1.1\r\nHost: h\r\nContent-Length: 5\n\n';
      expect(kindOf(text + 'b'.repeat(MAX_HEAD))).toBe('other');
    });
  });
});
