// Mail settings and templates: one way to name the SMTP server, a sender with it, the transport
// options each TLS mode gives nodemailer, and messages that escape every value and load nothing.
import { describe, expect, it } from '@jest/globals';
import { describeConfig, loadConfig } from '../../lib/config.ts';
import { renderMail, TEMPLATES, type TemplateName, type TemplateParams } from '../../lib/mail/templates.ts';
import { mailConfigured, safeHeaders, sendFailureReason, transportOptions } from '../../lib/mail/transport.ts';

const HOSTILE = '<img src="https://tracker.example/p.gif">&"\'\r\nBcc: victim@example.net';
const context = { publicUrl: 'https://analytics.example.org' };

/** Every template with every text param set to the hostile string. */
const hostileParams: { [N in TemplateName]: TemplateParams[N] } = {
  test: { requested_by: HOSTILE },
  invitation: { team_name: HOSTILE, role: HOSTILE, inviter_email: HOSTILE, token: 'tok"en', expires_at: '2026-12-02T06:00:00.000Z' },
  password_reset: { token: 'tok"en', expires_at: '2026-11-25T07:00:00.000Z' },
  password_changed: { changed_at: '2026-11-25T06:00:00.000Z' },
  email_change_confirm: { new_email: HOSTILE, token: 'tok"en', expires_at: '2026-11-26T06:00:00.000Z' },
  email_changed: { old_email: HOSTILE, new_email: HOSTILE, changed_at: '2026-11-25T06:00:00.000Z' },
  totp_disabled: { disabled_at: '2026-11-25T06:00:00.000Z', by_admin: false },
  passkey_added: { name: HOSTILE, added_at: '2026-11-25T06:00:00.000Z' },
  sign_in_confirm: { provider_name: HOSTILE, provider_email: HOSTILE, token: 'tok"en', expires_at: '2026-11-26T06:00:00.000Z' },
  sign_in_method_linked: { provider_name: HOSTILE, provider_email: HOSTILE, linked_at: '2026-11-25T06:00:00.000Z' },
  email_report: {
    site_id: '00000000-0000-4000-8000-000000000001',
    site_domain: HOSTILE,
    frequency: 'weekly',
    from: '2026-11-16',
    to: '2026-11-22',
    timezone: HOSTILE,
    figures: {
      visitors: { current: 1, previous: 0 },
      pageviews: { current: 1, previous: 0 },
      visits: { current: 1, previous: 0 },
      bounce_rate: { current: 100, previous: 0 },
      pages: [{ value: HOSTILE, current: 1, previous: 0 }],
      sources: [{ value: HOSTILE, current: 1, previous: 0 }],
      goals: [{ value: HOSTILE, current: 1, previous: 0 }],
    },
    unsubscribe_token: 'tok"en',
  },
};

describe('mail templates', () => {
  for (const name of Object.keys(TEMPLATES) as TemplateName[]) {
    it(`${name}: escapes every value in the HTML, loads nothing remote, keeps the subject on one line`, () => {
      const mail = renderMail(name, hostileParams[name], context);
      // No element that loads or runs anything, and no attribute that fetches (the escaped text may say "src=").
      expect(mail.html).not.toMatch(/<(img|script|iframe|link|object|embed|style)\b|<[^>]*\s(src|background|srcset)=|url\(/i);
      expect(mail.subject).not.toMatch(/[\r\n]/);
      expect(mail.text.length).toBeGreaterThan(0);
      if (Object.values(hostileParams[name]).includes(HOSTILE)) expect(mail.html).toContain('&lt;img src=&quot;https://tracker.example/p.gif&quot;&gt;&amp;&quot;&#39;');
    });
  }

  it('links to the public URL with the token URL-encoded', () => {
    expect(renderMail('password_reset', { token: 'a b/c', expires_at: '2026-11-25T07:00:00.000Z' }, context).text).toContain(
      'https://analytics.example.org/reset-password?token=a%20b%2Fc',
    );
    expect(renderMail('invitation', hostileParams.invitation, context).html).toContain('href="https://analytics.example.org/invite/tok%22en"');
    expect(renderMail('sign_in_confirm', hostileParams.sign_in_confirm, context).text).toContain('https://analytics.example.org/api/auth/oauth/confirm/tok%22en');
  });

  it('gives a report the one-click unsubscribe headers, its token URL-encoded, and no other template any header', () => {
    expect(renderMail('email_report', hostileParams.email_report, context).headers).toEqual({
      'List-Unsubscribe': '<https://analytics.example.org/api/email-reports/unsubscribe?token=tok%22en>',
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    });
    expect(renderMail('test', hostileParams.test, context).headers).toBeUndefined();
    expect(renderMail('email_report', hostileParams.email_report, context).text).toContain('https://analytics.example.org/email-reports/unsubscribe?token=tok%22en');
  });

  it('drops an extra header whose name or value could smuggle in another', () => {
    expect(safeHeaders({ 'List-Unsubscribe': '<https://a.example/u>', 'X-Bad': 'a\r\nBcc: victim@example.net', 'Bad: Name': 'x' })).toEqual({ 'List-Unsubscribe': '<https://a.example/u>' });
  });

  it('says when a link stops working, in UTC', () => {
    expect(renderMail('password_reset', { token: 't', expires_at: '2026-11-25T07:05:09.000Z' }, context).text).toContain('until 2026-11-25 07:05 UTC');
  });

  it('refuses a template name it does not know', () => {
    expect(() => renderMail('constructor', {}, context)).toThrow('unknown mail template "constructor"');
  });
});

describe('mail settings', () => {
  it('is off without an SMTP server', () => {
    expect(mailConfigured(loadConfig({ env: {} }))).toBe(false);
  });

  it('needs a sender with a server', () => {
    expect(() => loadConfig({ env: { PLUMB_SMTP_HOST: 'mail.example.org' } })).toThrow('PLUMB_MAIL_FROM: is required when an SMTP server is set');
  });

  it('takes the server as a URL or in parts, not both', () => {
    expect(() => loadConfig({ env: { PLUMB_SMTP_HOST: 'mail.example.org', PLUMB_SMTP_URL: 'smtp://mail.example.org', PLUMB_MAIL_FROM: 'a@example.org' } })).toThrow('set either PLUMB_SMTP_URL or PLUMB_SMTP_HOST, not both');
    expect(() => loadConfig({ env: { PLUMB_SMTP_URL: 'http://mail.example.org', PLUMB_MAIL_FROM: 'a@example.org' } })).toThrow('PLUMB_SMTP_URL: must use smtp: or smtps:');
  });

  it('refuses a sender that is not an address, or that spans lines', () => {
    expect(() => loadConfig({ env: { PLUMB_SMTP_HOST: 'mail.example.org', PLUMB_MAIL_FROM: 'nobody' } })).toThrow('PLUMB_MAIL_FROM: must be an address');
    expect(() => loadConfig({ env: { PLUMB_SMTP_HOST: 'mail.example.org', PLUMB_MAIL_FROM: 'a@example.org\r\nBcc: b@example.org' } })).toThrow('PLUMB_MAIL_FROM: must be an address');
    expect(mailConfigured(loadConfig({ env: { PLUMB_SMTP_HOST: 'mail.example.org', PLUMB_MAIL_FROM: 'Plumb <plumb@example.org>' } }))).toBe(true);
  });

  it('gives each TLS mode its port and upgrade rule', () => {
    const parts = (tls: string, extra: Record<string, string> = {}) =>
      transportOptions(loadConfig({ env: { PLUMB_SMTP_HOST: 'mail.example.org', PLUMB_SMTP_TLS: tls, PLUMB_MAIL_FROM: 'a@example.org', ...extra } }));
    expect(parts('starttls')).toMatchObject({ host: 'mail.example.org', port: 587, secure: false, requireTLS: true, ignoreTLS: false, auth: undefined });
    expect(parts('tls')).toMatchObject({ port: 465, secure: true, requireTLS: false });
    expect(parts('none', { PLUMB_SMTP_PORT: '2525', PLUMB_SMTP_USER: 'u', PLUMB_SMTP_PASSWORD: 'p' })).toMatchObject({ port: 2525, secure: false, ignoreTLS: true, auth: { user: 'u', pass: 'p' } });
    expect(parts('starttls', { PLUMB_MAIL_TIMEOUT_SECONDS: '7' })).toMatchObject({ connectionTimeout: 7000, greetingTimeout: 7000, socketTimeout: 7000 });
  });

  it('refuses an unknown TLS mode', () => {
    expect(() => loadConfig({ env: { PLUMB_SMTP_TLS: 'ssl' } })).toThrow('PLUMB_SMTP_TLS: must be one of starttls, tls, none');
  });

  it('masks the SMTP password and the URL’s password in the printed settings', () => {
    const url = describeConfig(loadConfig({ env: { PLUMB_SMTP_URL: 'smtp://user:hunter2@mail.example.org:587', PLUMB_MAIL_FROM: 'a@example.org' } }));
    expect(url.smtpUrl).toBe('smtp://user:****@mail.example.org:587');
    const parts = describeConfig(loadConfig({ env: { PLUMB_SMTP_HOST: 'mail.example.org', PLUMB_SMTP_PASSWORD: 'hunter2', PLUMB_MAIL_FROM: 'a@example.org' } }));
    expect(parts.smtpPassword).toBe('********');
  });
});

describe('why a send failed', () => {
  it('is the server’s answer when it gave one, else a category', () => {
    expect(sendFailureReason({ response: '550 5.1.1 <x@example.net>:\n  no such user', code: 'EENVELOPE' })).toBe('550 5.1.1 <x@example.net>: no such user');
    expect(sendFailureReason({ code: 'ETIMEDOUT' })).toBe('timeout');
    expect(sendFailureReason({ code: 'ECONNECTION' })).toBe('connection_failed');
    expect(sendFailureReason({ code: 'EAUTH' })).toBe('authentication_failed');
    expect(sendFailureReason(new Error('odd'))).toBe('send_failed');
  });
});
