// A real SMTP server for tests (the smtp-server package) on 127.0.0.1 that records every message
// it is given, decoded enough to read: sender, recipients, subject, the plain-text and HTML parts.
// A test can make it refuse recipients (with the SMTP answer it chooses) or hold a message
// without answering (a send cut short by a crash).
import { type SMTPAddress, SMTPServer, type SMTPSession } from 'smtp-server';
import { waitFor } from './instance.ts';

export interface CapturedMail {
  from: string;
  to: string[];
  headers: Record<string, string>;
  subject: string;
  text: string;
  html: string;
  raw: string;
  /** False while the server holds the message without answering. */
  answered: boolean;
}

export interface SmtpCapture {
  port: number;
  /** `smtp://127.0.0.1:<port>`, for PLUMB_SMTP_URL. */
  url: string;
  messages: CapturedMail[];
  /** Messages to this address, in arrival order. */
  to(address: string): CapturedMail[];
  /** Refuses every recipient with this answer (e.g. '451 4.3.0 try again later') until `refuse(null)`. */
  refuse(answer: string | null): void;
  /** Holds every message without answering it until `hold(false)`; held ones are then dropped unanswered. */
  hold(on: boolean): void;
  /** Waits until `count` messages to `address` have been taken (answered). */
  waitFor(address: string, count: number, timeoutMs?: number): Promise<CapturedMail[]>;
  close(): Promise<void>;
}

/** The first link to `path` in a message's text (the link a reader clicks). */
export function linkIn(mail: CapturedMail, path: string): string {
  const match = new RegExp(`https?://\\S+${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\S*`).exec(mail.text);
  if (!match) throw new Error(`no link to ${path} in:\n${mail.text}`);
  return match[0];
}

function decodeQuotedPrintable(body: string): string {
  const bytes: number[] = [];
  const soft = body.replace(/=\r?\n/g, '');
  for (let i = 0; i < soft.length; i++) {
    const c = soft[i];
    if (c === '=' && /^[0-9A-F]{2}$/i.test(soft.slice(i + 1, i + 3))) {
      bytes.push(Number.parseInt(soft.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      bytes.push(...Buffer.from(c, 'utf8'));
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/** Unfolded headers, names lower-case. */
function parseHeaders(block: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of block.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return headers;
}

/** RFC 2047 encoded words (=?UTF-8?Q?…?= and =?UTF-8?B?…?=). */
function decodeWords(value: string): string {
  return value.replace(/=\?utf-8\?([qb])\?([^?]*)\?=\s*/gi, (_, kind: string, text: string) =>
    kind.toLowerCase() === 'b' ? Buffer.from(text, 'base64').toString('utf8') : decodeQuotedPrintable(text.replace(/_/g, ' ')),
  );
}

function splitPart(part: string): { headers: Record<string, string>; body: string } {
  const at = part.search(/\r?\n\r?\n/);
  if (at === -1) return { headers: parseHeaders(part), body: '' };
  return { headers: parseHeaders(part.slice(0, at)), body: part.slice(at).replace(/^\r?\n\r?\n/, '') };
}

function decodeBody(headers: Record<string, string>, body: string): string {
  const encoding = (headers['content-transfer-encoding'] ?? '7bit').toLowerCase();
  if (encoding === 'quoted-printable') return decodeQuotedPrintable(body);
  if (encoding === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  return body;
}

/** Text and HTML of a message: walks multipart bodies, decodes each leaf. */
function leaves(headers: Record<string, string>, body: string, found: { text: string; html: string }) {
  const type = headers['content-type'] ?? 'text/plain';
  const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1];
  if (type.toLowerCase().startsWith('multipart/') && boundary) {
    for (const part of body.split(`--${boundary}`).slice(1)) {
      if (part.startsWith('--')) break;
      const parsed = splitPart(part.replace(/^\r?\n/, ''));
      leaves(parsed.headers, parsed.body, found);
    }
  } else if (type.toLowerCase().startsWith('text/html')) {
    found.html = decodeBody(headers, body).replace(/\r\n/g, '\n').trimEnd();
  } else if (type.toLowerCase().startsWith('text/plain')) {
    found.text = decodeBody(headers, body).replace(/\r\n/g, '\n').trimEnd();
  }
}

export function parseMail(raw: string, session: Pick<SMTPSession, 'envelope'>, answered: boolean): CapturedMail {
  const { headers, body } = splitPart(raw);
  const found = { text: '', html: '' };
  leaves(headers, body, found);
  const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
  return { from, to: session.envelope.rcptTo.map((r) => r.address), headers, subject: decodeWords(headers.subject ?? ''), ...found, raw, answered };
}

export async function startSmtpCapture(): Promise<SmtpCapture> {
  const messages: CapturedMail[] = [];
  let refusal: string | null = null;
  let holding = false;
  const held: ((err?: Error | null) => void)[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onRcptTo(_address: SMTPAddress, _session: SMTPSession, callback) {
      if (refusal === null) return callback();
      const code = Number(refusal.slice(0, 3));
      callback(Object.assign(new Error(refusal.slice(4)), { responseCode: code }));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const mail = parseMail(Buffer.concat(chunks).toString('utf8'), session, !holding);
        messages.push(mail);
        if (holding) held.push(callback);
        else callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const to = (address: string) => messages.filter((m) => m.to.includes(address));
  return {
    port,
    url: `smtp://127.0.0.1:${port}`,
    messages,
    to,
    refuse(answer) {
      refusal = answer;
    },
    hold(on) {
      holding = on;
      if (!on) held.length = 0;
    },
    async waitFor(address, count, timeoutMs = 20_000) {
      await waitFor(
        async () => to(address).filter((m) => m.answered).length >= count,
        timeoutMs,
        () => `${to(address).filter((m) => m.answered).length} of ${count} messages to ${address} arrived (all: ${messages.map((m) => `${m.to.join(',')} "${m.subject}"`).join('; ')})`,
      );
      return to(address).filter((m) => m.answered);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
