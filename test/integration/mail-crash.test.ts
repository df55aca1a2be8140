// Crash safety of mail: `plumb serve` is killed (SIGKILL) while its messages are on the wire (the
// SMTP server holds them unanswered); restarted on the same data dir, it sends every one of them.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { cookiesOf } from '../support/accounts.ts';
import { type Instance, request, startInstance } from '../support/instance.ts';
import { linkIn, type SmtpCapture, startSmtpCapture } from '../support/smtp-capture.ts';

let smtp: SmtpCapture;
let plumb: Instance | undefined;

beforeAll(async () => {
  smtp = await startSmtpCapture();
});

afterAll(async () => {
  await plumb?.destroy();
  await smtp.close();
});

describe('mail across a crash', () => {
  it('after SIGKILL mid-send and a restart, every queued message is sent; none is lost', async () => {
    const env = {
      PLUMB_SMTP_URL: smtp.url,
      PLUMB_MAIL_FROM: 'plumb@example.org',
      // The same public URL on both runs (the default follows the port, which changes).
      PLUMB_PUBLIC_URL: 'https://analytics.example.org',
      PLUMB_MAIL_TIMEOUT_SECONDS: '2',
      PLUMB_MAIL_SWEEP_SECONDS: '1',
      PLUMB_MAIL_RETRY_BASE_SECONDS: '1',
      PLUMB_LOG_LEVEL: 'warn',
    };
    plumb = await startInstance({ env });
    const first = await request(`${plumb.url}/api/initial-user`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ email: 'owner@example.com', password: 'a long enough password' }),
    });
    expect(first.status).toBe(201);
    const cookie = cookiesOf(first);
    const call = (path: string, body: unknown) =>
      request(`${plumb!.url}${path}`, { method: 'POST', headers: { Cookie: cookie, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    const team = await call('/api/user/teams', { name: 'Crash' });
    expect(team.status).toBe(201);

    smtp.hold(true);
    const invitees = ['one@example.net', 'two@example.net', 'three@example.net'];
    const links: string[] = [];
    for (const email of invitees) {
      const res = await call(`/api/user/teams/${team.body.id as string}/members`, { email, role: 'member' });
      expect(res.status).toBe(201);
      links.push(res.body.invite_url as string);
    }
    // Every message reached the server, which has not answered: the sends are cut by the kill.
    for (const email of invitees) {
      const deadline = Date.now() + 20_000;
      while (smtp.to(email).length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(smtp.to(email)).toHaveLength(1);
      expect(smtp.to(email)[0].answered).toBe(false);
    }
    await plumb.stop('SIGKILL');
    smtp.hold(false);

    plumb = await startInstance({ dataDir: plumb.dataDir, env });
    for (const [i, email] of invitees.entries()) {
      const delivered = await smtp.waitFor(email, 1, 60_000);
      expect(linkIn(delivered[0], '/invite/')).toBe(links[i]);
    }
  }, 120_000);
});
