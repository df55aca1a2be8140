// The SMTP side of mail: whether this instance has a server, and sending one rendered message
// through it with nodemailer (one connection per message, every wait bounded). A refusal is
// reported with the server's own answer, so an operator can see why (bad credentials, sender
// refused, mailbox unknown); credentials never appear in it.
import type SMTPTransport from 'nodemailer/lib/smtp-transport/index.js';
import type { Config } from '../config.ts';
import type { RenderedMail } from './templates.ts';

type MailSettings = Pick<Config, 'smtpUrl' | 'smtpHost' | 'smtpPort' | 'smtpUser' | 'smtpPassword' | 'smtpTls' | 'mailFrom' | 'mailTimeoutSeconds' | 'publicUrl'>;

export interface OutgoingMail extends RenderedMail {
  to: string;
  /** The outbox id: the Message-ID is made from it, so a message sent twice (after a crash) is recognisable. */
  id: string;
}

export interface MailTransport {
  /** Sends now; throws MailSendError when the server cannot be reached or refuses. */
  send(message: OutgoingMail): Promise<void>;
  close(): void;
}

/** Why a message was not sent: `reason` is safe to store and show (the server's answer or a category). */
export class MailSendError extends Error {
  readonly reason: string;
  constructor(reason: string) {
    super(`the mail server did not take the message: ${reason}`);
    this.name = 'MailSendError';
    this.reason = reason;
  }
}

/** True when an SMTP server and a sender are set (the config loader refuses one without the other). */
export const mailConfigured = (config: Pick<Config, 'smtpUrl' | 'smtpHost' | 'mailFrom'>) => (config.smtpUrl !== undefined || config.smtpHost !== undefined) && config.mailFrom !== undefined;

const DEFAULT_PORTS = { tls: 465, starttls: 587, none: 25 } as const;

export function transportOptions(config: MailSettings): SMTPTransport.Options {
  const timeouts = { connectionTimeout: config.mailTimeoutSeconds * 1000, greetingTimeout: config.mailTimeoutSeconds * 1000, socketTimeout: config.mailTimeoutSeconds * 1000 };
  if (config.smtpUrl) return { url: config.smtpUrl, ...timeouts };
  const tls = config.smtpTls as keyof typeof DEFAULT_PORTS;
  return {
    host: config.smtpHost,
    port: config.smtpPort || DEFAULT_PORTS[tls],
    secure: tls === 'tls',
    requireTLS: tls === 'starttls',
    ignoreTLS: tls === 'none',
    auth: config.smtpUser ? { user: config.smtpUser, pass: config.smtpPassword ?? '' } : undefined,
    ...timeouts,
  };
}

/** The server's answer ('550 5.1.1 mailbox unknown') or a category ('connection_failed', 'timeout', …), short. */
export function sendFailureReason(err: unknown): string {
  const e = err as { response?: unknown; code?: unknown; message?: unknown };
  if (typeof e.response === 'string' && e.response.trim() !== '') return e.response.replace(/\s+/g, ' ').trim().slice(0, 300);
  switch (e.code) {
    case 'ETIMEDOUT':
      return 'timeout';
    case 'ECONNECTION':
    case 'ESOCKET':
    case 'EDNS':
      return 'connection_failed';
    case 'EAUTH':
      return 'authentication_failed';
    case 'ETLS':
      return 'tls_failed';
    default:
      return typeof e.code === 'string' ? e.code.toLowerCase() : 'send_failed';
  }
}

/** A template's extra headers, any with a line break in its name or value left out (no header can be smuggled in). */
export function safeHeaders(headers: Record<string, string> | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(headers ?? {}).filter(([name, value]) => /^[A-Za-z0-9-]+$/.test(name) && !/[\r\n]/.test(value)));
}

export function createMailTransport(config: MailSettings): MailTransport {
  // nodemailer (~6 MiB of heap) is loaded with the first transport, not by every node that never mails.
  const transporter = import('nodemailer').then(({ default: nodemailer }) => nodemailer.createTransport(transportOptions(config)));
  const host = new URL(config.publicUrl).hostname || 'localhost';
  return {
    async send(message) {
      try {
        await (await transporter).sendMail({
          from: config.mailFrom,
          to: message.to,
          subject: message.subject,
          text: message.text,
          html: message.html,
          messageId: `<${message.id}@${host}>`,
          headers: { ...safeHeaders(message.headers), 'Auto-Submitted': 'auto-generated' },
        });
      } catch (err) {
        throw new MailSendError(sendFailureReason(err));
      }
    },
    close: () => void transporter.then((opened) => opened.close()),
  };
}
