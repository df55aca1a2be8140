// Mail through a real node and a real SMTP server on loopback: the outbox (queued in a
// transaction, sent by the leader, retried with backoff while the server refuses, never sent for
// a rolled-back change), the admin test message, the status field, the system page and /metrics.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { as, type Person, person } from '../support/accounts.ts';
import { startTestNode, type TestNode } from '../support/node.ts';
import { type SmtpCapture, startSmtpCapture } from '../support/smtp-capture.ts';
import { enqueueMail, MAIL_QUEUED } from '../../lib/mail/outbox.ts';
import { waitFor } from '../support/instance.ts';
import { exposedSamples } from '../support/metrics.ts';

const PUBLIC_URL = 'https://analytics.example.org';
const METRICS_TOKEN = 'mail-metrics-token-0123456789';

let smtp: SmtpCapture;
let t: TestNode;
let bare: TestNode;
let owner: Person;
let admin: Person;
let user: Person;
let n = 0;
const fresh = () => `reader${++n}-${Date.now()}@example.net`;

const queue = async (to: string, requestedBy = 'ops@example.org') => {
  const id = await t.node.runtime.metadata().transaction((tx) => enqueueMail(tx, { to, template: 'test', params: { requested_by: requestedBy } }));
  t.node.broker.broadcast(MAIL_QUEUED, {});
  return id;
};
const row = async (id: string) =>
  (await t.node.runtime.metadata().query<{ status: string; attempts: number; error: string | null; params: unknown }>('SELECT status, attempts, error, params FROM mail_messages WHERE id = $1', [id])).rows[0];
const scrape = async () => {
  const res = await fetch(`${t.url}/metrics`, { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } });
  return exposedSamples(await res.text());
};

beforeAll(async () => {
  smtp = await startSmtpCapture();
  t = await startTestNode({
    PLUMB_PUBLIC_URL: PUBLIC_URL,
    PLUMB_SMTP_URL: smtp.url,
    PLUMB_MAIL_FROM: 'Plumb <plumb@analytics.example.org>',
    PLUMB_MAIL_RETRY_BASE_SECONDS: '1',
    PLUMB_MAIL_RETRY_MAX_SECONDS: '1',
    PLUMB_MAIL_SWEEP_SECONDS: '1',
    PLUMB_MAIL_MAX_ATTEMPTS: '3',
    PLUMB_MAIL_TIMEOUT_SECONDS: '5',
    PLUMB_METRICS_TOKEN: METRICS_TOKEN,
  });
  owner = await person(t, 'owner');
  admin = await person(t, 'admin');
  user = await person(t, 'user');
}, 120_000);

afterAll(async () => {
  await (bare ?? t)?.stop();
  await smtp?.close();
});

describe('the mail outbox', () => {
  it('sends a queued message from the configured sender, as text and HTML, and clears its params once sent', async () => {
    const to = fresh();
    const id = await queue(to, 'ops <b>&</b> co');
    const [mail] = await smtp.waitFor(to, 1);
    expect(mail.from).toBe('plumb@analytics.example.org');
    expect(mail.headers.from).toBe('Plumb <plumb@analytics.example.org>');
    expect(mail.headers['message-id']).toBe(`<${id}@analytics.example.org>`);
    expect(mail.subject).toBe('Plumb test message');
    expect(mail.text).toContain('sent at the request of ops <b>&</b> co.');
    expect(mail.html).toContain('sent at the request of ops &lt;b&gt;&amp;&lt;/b&gt; co.');
    expect(mail.html).not.toMatch(/<img|<script|src=/i);
    await waitFor(async () => (await row(id)).status === 'sent', 5000, () => 'the message was not marked sent');
    expect(await row(id)).toEqual({ status: 'sent', attempts: 1, error: null, params: {} });
  });

  it('retries with backoff while the server refuses, and sends once it accepts', async () => {
    const to = fresh();
    smtp.refuse('451 4.3.0 Mailbox busy, try again later');
    const id = await queue(to);
    try {
      await waitFor(async () => (await row(id)).attempts >= 1, 10_000, () => `no attempt was recorded: ${JSON.stringify(smtp.messages.length)}`);
      expect(await row(id)).toMatchObject({ status: 'retrying', attempts: 1, error: expect.stringContaining('451 4.3.0 Mailbox busy') });
    } finally {
      smtp.refuse(null);
    }
    await smtp.waitFor(to, 1);
    await waitFor(async () => (await row(id)).status === 'sent', 10_000, () => 'the message was not marked sent');
    expect(await row(id)).toMatchObject({ status: 'sent', attempts: 2, error: null });
  });

  it('marks a message failed after its last attempt and counts it on /metrics and the system page', async () => {
    const to = fresh();
    const before = await scrape();
    smtp.refuse('550 5.1.1 No such mailbox');
    let id: string;
    try {
      id = await queue(to);
      await waitFor(async () => (await row(id)).status === 'failed', 20_000, () => 'the message did not fail');
    } finally {
      smtp.refuse(null);
    }
    expect(await row(id)).toEqual({ status: 'failed', attempts: 3, error: expect.stringContaining('550 5.1.1 No such mailbox'), params: {} });
    const after = await scrape();
    expect((after.get('plumb_mail_attempts_total{result="failed"}') ?? 0) - (before.get('plumb_mail_attempts_total{result="failed"}') ?? 0)).toBe(3);
    expect(after.get('plumb_mail_messages{status="failed"}')).toBeGreaterThanOrEqual(1);
    expect(after.get('plumb_mail_attempts_total{result="ok"}')).toBeGreaterThanOrEqual(1);
    const view = (await as(t, owner, 'GET', '/api/admin/system')).body as { mail: Record<string, unknown> };
    const { rows } = await t.node.runtime.metadata().query<{ n: number }>("SELECT count(*)::int AS n FROM mail_messages WHERE status = 'failed'");
    expect(view.mail).toEqual({ configured: true, pending: 0, retrying: 0, processing: 0, failed: rows[0].n });
    expect(smtp.to(to)).toEqual([]);
  });

  it('counts waiting messages as the queue depth', async () => {
    smtp.refuse('451 4.3.0 try again later');
    try {
      const id = await queue(fresh());
      await waitFor(async () => (await row(id)).status === 'retrying', 10_000, () => 'the message was not retried');
      const view = (await as(t, owner, 'GET', '/api/admin/system')).body as { mail: Record<string, number> };
      expect(view.mail.retrying + view.mail.pending + view.mail.processing).toBeGreaterThanOrEqual(1);
      const metrics = await scrape();
      expect((metrics.get('plumb_mail_messages{status="retrying"}') ?? 0) + (metrics.get('plumb_mail_messages{status="pending"}') ?? 0) + (metrics.get('plumb_mail_messages{status="processing"}') ?? 0)).toBeGreaterThanOrEqual(1);
    } finally {
      smtp.refuse(null);
    }
  });

  it('queues nothing for a change that rolls back', async () => {
    const to = fresh();
    await expect(
      t.node.runtime.metadata().transaction(async (tx) => {
        await enqueueMail(tx, { to, template: 'test', params: { requested_by: 'nobody' } });
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    const { rows } = await t.node.runtime.metadata().query('SELECT id FROM mail_messages WHERE recipient = $1', [to]);
    expect(rows).toEqual([]);
  });

  it('refuses a template it does not know and a recipient list', async () => {
    const db = t.node.runtime.metadata();
    await expect(db.transaction((tx) => enqueueMail(tx, { to: 'a@example.net', template: 'nope' as 'test', params: { requested_by: 'x' } }))).rejects.toThrow('unknown mail template');
    await expect(db.transaction((tx) => enqueueMail(tx, { to: 'a@example.net, b@example.net', template: 'test', params: { requested_by: 'x' } }))).rejects.toThrow('one plain address');
  });

});

describe('GET /api/status', () => {
  it('says mail is configured', async () => {
    expect((await as(t, undefined, 'GET', '/api/status')).body.mail_configured).toBe(true);
  });
});

describe('POST /api/admin/mail/test', () => {
  it('sends a test message now for an instance admin', async () => {
    const to = fresh();
    const res = await as(t, admin, 'POST', '/api/admin/mail/test', { to });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'sent', to });
    const [mail] = smtp.to(to);
    expect(mail.subject).toBe('Plumb test message');
    expect(mail.text).toContain(`sent at the request of ${admin.email}`);
  });

  it('answers 502 with the server’s answer when it refuses', async () => {
    smtp.refuse('550 5.7.1 Relaying denied');
    try {
      const res = await as(t, owner, 'POST', '/api/admin/mail/test', { to: fresh() });
      expect(res.status).toBe(502);
      expect(res.body).toEqual({ code: 'bad_gateway', message: expect.stringContaining('550 5.7.1 Relaying denied') });
    } finally {
      smtp.refuse(null);
    }
  });

  it('is refused to someone who is not an instance owner or admin', async () => {
    const to = fresh();
    const res = await as(t, user, 'POST', '/api/admin/mail/test', { to });
    expect(res.status).toBe(403);
    expect(smtp.to(to)).toEqual([]);
  });

  it('answers 400 for something that is not an address', async () => {
    const bad = await as(t, owner, 'POST', '/api/admin/mail/test', { to: 'not an address\r\nBcc: x@example.net' });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('validation_failed');
  });
});

// Last on this node: it empties the sign-in bucket of 127.0.0.1.
describe('rate limits', () => {
  it('counts forgot-password and reset-password in the sign-in bucket', async () => {
    let status = 0;
    for (let i = 0; i < 50 && status !== 429; i++) status = (await as(t, undefined, 'POST', '/api/login', { email: 'nobody@example.net', password: 'wrong password' })).status;
    expect(status).toBe(429);
    const forgot = await as(t, undefined, 'POST', '/api/auth/forgot-password', { email: owner.email });
    expect(forgot.status).toBe(429);
    expect(forgot.headers.get('retry-after')).toMatch(/^\d+$/);
    expect((await as(t, undefined, 'POST', '/api/auth/reset-password', { token: 'x', password: 'a long enough password' })).status).toBe(429);
    expect((await as(t, undefined, 'POST', '/api/user/email/confirm', { token: 'x' })).status).toBe(429);
  });
});

// One embedded node per process: this part runs on a node of its own, after the first stopped.
describe('without an SMTP server', () => {
  beforeAll(async () => {
    await t.stop();
    bare = await startTestNode({ PLUMB_MAIL_SWEEP_SECONDS: '1' });
  }, 60_000);

  it('GET /api/status says mail is not configured', async () => {
    expect((await as(bare, undefined, 'GET', '/api/status')).body.mail_configured).toBe(false);
  });

  it('POST /api/auth/forgot-password and POST /api/user/email answer 409 and queue nothing', async () => {
    const ana = await person(bare, 'user');
    const forgot = await as(bare, undefined, 'POST', '/api/auth/forgot-password', { email: ana.email });
    expect(forgot.status).toBe(409);
    expect(forgot.body.code).toBe('conflict');
    const change = await as(bare, ana, 'POST', '/api/user/email', { email: 'elsewhere@example.net', password: ana.password });
    expect(change.status).toBe(409);
    const { rows } = await bare.node.runtime.metadata().query<{ n: number }>('SELECT count(*)::int AS n FROM account_tokens WHERE user_id = $1', [ana.id]);
    expect(rows[0].n).toBe(0);
  });

  it('POST /api/admin/mail/test answers 409 naming the settings', async () => {
    const bareOwner = await person(bare, 'owner');
    const none = await as(bare, bareOwner, 'POST', '/api/admin/mail/test', { to: 'a@example.net' });
    expect(none.status).toBe(409);
    expect(none.body.message).toContain('PLUMB_SMTP_URL');
  });

  it('discards what is queued: nothing is sent, now or later', async () => {
    const db = bare.node.runtime.metadata();
    const id = await db.transaction((tx) => enqueueMail(tx, { to: 'someone@example.net', template: 'test', params: { requested_by: 'x' } }));
    bare.node.broker.broadcast(MAIL_QUEUED, {});
    await waitFor(
      async () => (await db.query<{ status: string }>('SELECT status FROM mail_messages WHERE id = $1', [id])).rows[0].status === 'discarded',
      10_000,
      () => 'the message was not discarded',
    );
    const { rows } = await db.query('SELECT status, error, params FROM mail_messages WHERE id = $1', [id]);
    expect(rows[0]).toEqual({ status: 'discarded', error: 'mail_not_configured', params: {} });
  });
});
