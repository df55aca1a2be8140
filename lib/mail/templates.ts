// Every message Plumb sends, by name: each template turns its typed params (and the instance's
// public URL) into a subject, a plain-text body and an HTML body. The HTML has no remote images,
// no tracking pixels and no scripts; every value in it is HTML-escaped. Links point at the
// instance's public URL, built when the message is sent.
import { BRAND } from '../brand.ts';
import { type EmailReportParams, renderEmailReport } from '../email-reports/template.ts';
import { escapeHtml, oneLine } from './html.ts';

export { escapeHtml } from './html.ts';

export interface RenderedMail {
  subject: string;
  text: string;
  html: string;
  /** Extra headers the message carries (List-Unsubscribe); names and values free of line breaks. */
  headers?: Record<string, string>;
}

/** What every template may use besides its params. */
export interface MailContext {
  /** The instance's public base URL, no trailing slash. */
  publicUrl: string;
}

/** The params of each template, by name. */
export interface TemplateParams {
  test: { requested_by: string };
  invitation: { team_name: string; role: string; inviter_email: string; token: string; expires_at: string };
  password_reset: { token: string; expires_at: string };
  password_changed: { changed_at: string };
  email_change_confirm: { new_email: string; token: string; expires_at: string };
  email_changed: { old_email: string; new_email: string; changed_at: string };
  totp_disabled: { disabled_at: string; by_admin: boolean };
  passkey_added: { name: string; added_at: string };
  /** A directory identity waits for the account's owner to confirm it (lib/auth/federated/identities.ts). */
  sign_in_confirm: { provider_name: string; provider_email: string; token: string; expires_at: string };
  sign_in_method_linked: { provider_name: string; provider_email: string; linked_at: string };
  /** A scheduled summary of a site (lib/email-reports/). */
  email_report: EmailReportParams;
}

export type TemplateName = keyof TemplateParams;


/** A UTC time a person reads: "2026-11-25 06:31 UTC". */
const when = (iso: string) => {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
};

/** A message of paragraphs and at most one call to action, written once for both bodies. */
interface Letter {
  subject: string;
  paragraphs: string[];
  action?: { label: string; url: string };
  /** After the action, e.g. how long the link works. */
  after?: string[];
}

function letter({ subject, paragraphs, action, after = [] }: Letter): RenderedMail {
  const footer = `— ${BRAND}`;
  const text = [...paragraphs, ...(action ? [`${action.label}:\n${action.url}`] : []), ...after, footer].join('\n\n');
  const p = (line: string) => `<p style="margin:0 0 16px">${escapeHtml(line)}</p>`;
  const button = action
    ? `<p style="margin:0 0 16px"><a href="${escapeHtml(action.url)}" style="display:inline-block;padding:10px 16px;background:#1f4fd6;color:#ffffff;text-decoration:none;border-radius:4px">${escapeHtml(action.label)}</a></p>` +
      `<p style="margin:0 0 16px;font-size:13px;color:#555555">${escapeHtml(action.url)}</p>`
    : '';
  const html = [
    '<!doctype html>',
    `<html><head><meta charset="utf-8"><title>${escapeHtml(oneLine(subject))}</title></head>`,
    '<body style="font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;font-size:15px;line-height:1.5;color:#1a1a1a;margin:0;padding:24px">',
    ...paragraphs.map(p),
    button,
    ...after.map(p),
    `<p style="margin:24px 0 0;color:#555555">${escapeHtml(footer)}</p>`,
    '</body></html>',
  ].join('\n');
  return { subject: oneLine(subject), text, html };
}

const notYou = 'If this was not you, sign in and change your password now, or tell your instance administrator.';

type Template<P> = (params: P, context: MailContext) => RenderedMail;

export const TEMPLATES: { [N in TemplateName]: Template<TemplateParams[N]> } = {
  test: (p) =>
    letter({
      subject: `${BRAND} test message`,
      paragraphs: [`This is a test message from ${BRAND}, sent at the request of ${p.requested_by}.`, 'Mail delivery works.'],
    }),

  invitation: (p, c) =>
    letter({
      subject: `You are invited to join ${p.team_name} on ${BRAND}`,
      paragraphs: [`${p.inviter_email} invited you to join the team "${p.team_name}" as ${p.role}.`],
      action: { label: 'Accept the invitation', url: `${c.publicUrl}/invite/${encodeURIComponent(p.token)}` },
      after: [`The link works once, until ${when(p.expires_at)}. If you did not expect this invitation, ignore this message.`],
    }),

  password_reset: (p, c) =>
    letter({
      subject: `Reset your ${BRAND} password`,
      paragraphs: [`Someone asked to reset the password of your ${BRAND} account.`],
      action: { label: 'Choose a new password', url: `${c.publicUrl}/reset-password?token=${encodeURIComponent(p.token)}` },
      after: [`The link works once, until ${when(p.expires_at)}. If you did not ask for this, ignore this message: your password stays as it is.`],
    }),

  password_changed: (p) =>
    letter({
      subject: `Your ${BRAND} password was changed`,
      paragraphs: [`The password of your ${BRAND} account was changed at ${when(p.changed_at)}. Every other session was signed out.`, notYou],
    }),

  email_change_confirm: (p, c) =>
    letter({
      subject: `Confirm your new ${BRAND} email address`,
      paragraphs: [`Someone asked to change the email address of a ${BRAND} account to ${p.new_email}.`],
      action: { label: 'Confirm this address', url: `${c.publicUrl}/confirm-email?token=${encodeURIComponent(p.token)}` },
      after: [`The link works once, until ${when(p.expires_at)}. If you did not ask for this, ignore this message: nothing changes.`],
    }),

  email_changed: (p) =>
    letter({
      subject: `Your ${BRAND} email address was changed`,
      paragraphs: [`The email address of your ${BRAND} account was changed from ${p.old_email} to ${p.new_email} at ${when(p.changed_at)}.`, notYou],
    }),

  totp_disabled: (p) =>
    letter({
      subject: `Two-factor authentication was turned off for your ${BRAND} account`,
      paragraphs: [
        p.by_admin
          ? `An instance administrator turned off two-factor authentication for your ${BRAND} account at ${when(p.disabled_at)}.`
          : `Two-factor authentication was turned off for your ${BRAND} account at ${when(p.disabled_at)}.`,
        notYou,
      ],
    }),

  passkey_added: (p) =>
    letter({
      subject: `A passkey was added to your ${BRAND} account`,
      paragraphs: [`A passkey named "${p.name}" was added to your ${BRAND} account at ${when(p.added_at)}.`, notYou],
    }),

  sign_in_confirm: (p, c) =>
    letter({
      subject: `Confirm signing in to ${BRAND} with ${p.provider_name}`,
      paragraphs: [`Someone signed in with the ${p.provider_name} account ${p.provider_email} and asked to use it for your ${BRAND} account.`],
      action: { label: `Use ${p.provider_name} to sign in`, url: `${c.publicUrl}/api/auth/oauth/confirm/${encodeURIComponent(p.token)}` },
      after: [`The link works once, until ${when(p.expires_at)}. If this was not you, ignore this message: nothing changes.`],
    }),

  email_report: renderEmailReport,

  sign_in_method_linked: (p) =>
    letter({
      subject: `A new way to sign in was added to your ${BRAND} account`,
      paragraphs: [`The ${p.provider_name} account ${p.provider_email} can now sign in to your ${BRAND} account; it was linked at ${when(p.linked_at)}.`, notYou],
    }),
};

export const isTemplateName = (name: string): name is TemplateName => Object.hasOwn(TEMPLATES, name);

/** Renders a stored message; throws for a template name this version does not know. */
export function renderMail(template: string, params: unknown, context: MailContext): RenderedMail {
  if (!isTemplateName(template)) throw new Error(`unknown mail template "${template}"`);
  return (TEMPLATES[template] as Template<unknown>)(params, context);
}
