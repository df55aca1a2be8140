// The mail outbox: a change queues its message in the change's own transaction, so the message
// commits or rolls back with it. A committed change therefore always has its message (a crash
// after the commit loses nothing) and a rolled-back one never has. Every code path that mails
// someone calls `enqueueMail` with its transaction handle and needs nothing else from mail;
// sending is the leader's dispatcher's job (lib/mail/dispatcher.ts), woken by `MAIL_QUEUED`.
// Without an SMTP server the leader discards queued messages instead: nothing is ever sent.
import { randomUUID } from 'node:crypto';
import type { MetadataQueryable } from '../stores/metadata/index.ts';
import { isTemplateName, type TemplateName, type TemplateParams } from './templates.ts';

/** Broadcast after a commit that queued mail: wakes the leader's dispatcher at once. */
export const MAIL_QUEUED = 'mail.queued';

export interface MailRequest<N extends TemplateName> {
  /** One address. */
  to: string;
  template: N;
  params: TemplateParams[N];
  /** The reader's language; every template is English for now. */
  locale?: string;
}

/** In the caller's transaction: one message, sent by the leader after the commit. Answers its id. */
export async function enqueueMail<N extends TemplateName>(db: MetadataQueryable, message: MailRequest<N>): Promise<string> {
  if (!isTemplateName(message.template)) throw new Error(`unknown mail template "${message.template}"`);
  if (/[\r\n,;<>]/.test(message.to) || !message.to.includes('@')) throw new Error('a message goes to exactly one plain address');
  const id = randomUUID();
  await db.query('INSERT INTO mail_messages (id, recipient, template, params, locale, status) VALUES ($1, $2, $3, $4, $5, $6)', [
    id,
    message.to,
    message.template,
    JSON.stringify(message.params),
    message.locale ?? 'en',
    'pending',
  ]);
  return id;
}
