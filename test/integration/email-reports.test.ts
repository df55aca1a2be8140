// Scheduled email reports through a real node and a real SMTP server on loopback: choosing a
// frequency per site (who may, what is refused), the weekly report's figures beside the stats
// API's for the same dates in the site's time zone, exactly one report per period whatever runs
// the job again (this leader or the next), one-click unsubscribe with its headers, and no report
// for someone who lost access to the site.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { rebuildVisits } from '../../lib/analytics/visits.ts';
import { emailReportsJob, queueDueReports } from '../../lib/email-reports/job.ts';
import { createGoal } from '../../lib/goals/goals.ts';
import { createSite, type Site } from '../../lib/sites/sites.ts';
import { as, type Person, person, withToken } from '../support/accounts.ts';
import { request } from '../support/instance.ts';
import { startTestNode, type TestNode } from '../support/node.ts';
import { type CapturedMail, type SmtpCapture, startSmtpCapture } from '../support/smtp-capture.ts';

const PUBLIC_URL = 'https://analytics.example.org';
/** A Wednesday: the last complete week in New York is Monday 23 February to Sunday 1 March 2026. */
const NOW = new Date('2026-03-04T12:00:00Z');
const WEEK = { from: '2026-02-23', to: '2026-03-01' };
const WEEK_BEFORE = { from: '2026-02-16', to: '2026-02-22' };

let smtp: SmtpCapture;
let t: TestNode;
let site: Site;
let owner: Person;

const db = () => t.node.runtime.metadata();
const choose = (who: Person, siteId: string, body: unknown) => as(t, who, 'PUT', `/api/sites/${siteId}/email-report`, body);
const subscriptionsOf = async (userId: string) =>
  (await db().query<{ id: string; frequency: string }>('SELECT id, frequency FROM email_report_subscriptions WHERE user_id = $1', [userId])).rows;

/** A viewer of the site, subscribed weekly, as if they had subscribed before the week began. */
async function weeklyViewer(of: Site = site): Promise<Person> {
  const viewer = await person(t, 'user');
  await db().query("INSERT INTO site_members (site_id, user_id, role) VALUES ($1, $2, 'viewer')", [of.id, viewer.id]);
  expect((await choose(viewer, of.id, { frequency: 'weekly' })).status).toBe(200);
  await db().query("UPDATE email_report_subscriptions SET created_at = '2026-01-01T00:00:00Z' WHERE user_id = $1", [viewer.id]);
  return viewer;
}

/** The body's "  Label: value (change)" line of a section, as a reader sees it. */
const lineOf = (mail: CapturedMail, label: string) => mail.text.split('\n').find((line) => line.startsWith(`  ${label}: `))?.trim();

beforeAll(async () => {
  smtp = await startSmtpCapture();
  t = await startTestNode({
    PLUMB_PUBLIC_URL: PUBLIC_URL,
    PLUMB_SMTP_URL: smtp.url,
    PLUMB_MAIL_FROM: 'Plumb <plumb@analytics.example.org>',
    PLUMB_MAIL_SWEEP_SECONDS: '1',
    PLUMB_MAIL_RETRY_BASE_SECONDS: '1',
    PLUMB_MAIL_TIMEOUT_SECONDS: '5',
  });
  owner = await person(t, 'owner');
  site = await createSite(db(), { teamId: t.team.id, domain: 'reports.example', timezone: 'America/New_York' });
  await createGoal(db(), owner, site.id, { name: 'Saw pricing', type: 'path', path_pattern: '/pricing' });

  // New York is UTC−5 in February: the week runs from 2026-02-23T05:00Z to 2026-03-02T05:00Z.
  const analytics = t.node.runtime.analytics();
  const database = analytics.tenantDatabase(t.team.id);
  const hit = (visitor: string, session: string, path: string, ts: string, source: string) => ({
    ts,
    site_id: site.id,
    visitor_id: visitor,
    session_id: session,
    hit_id: crypto.randomUUID(),
    path,
    hostname: 'reports.example',
    referrer_source: source,
    channel: source === 'Google' ? 'search' : 'social',
  });
  await analytics.insert(
    'hits',
    [
      // The week: three visitors, four pageviews, two bounces.
      hit('1', '11', '/', '2026-02-24T15:00:00.000Z', 'Google'),
      hit('1', '11', '/pricing', '2026-02-24T15:01:00.000Z', 'Google'),
      hit('2', '21', '/', '2026-02-25T15:00:00.000Z', 'Hacker News'),
      // Sunday 23:30 in New York, already Monday in UTC: still the week.
      hit('3', '31', '/pricing', '2026-03-02T04:30:00.000Z', 'Google'),
      // Monday 00:30 in New York: the next week.
      hit('4', '41', '/late', '2026-03-02T05:30:00.000Z', 'Google'),
      // The week before: two visitors, one of them on its Sunday night (Monday in UTC).
      hit('5', '51', '/', '2026-02-23T04:30:00.000Z', 'Google'),
      hit('6', '61', '/', '2026-02-18T12:00:00.000Z', 'Hacker News'),
      hit('6', '61', '/about', '2026-02-18T12:05:00.000Z', 'Hacker News'),
    ],
    { database },
  );
  await rebuildVisits(analytics, database);
}, 120_000);

afterAll(async () => {
  await t?.stop();
  await smtp?.close();
});

describe('PUT /api/sites/{id}/email-report', () => {
  it('subscribes the caller weekly, changes it to monthly, and turns it off', async () => {
    const viewer = await person(t, 'user');
    await db().query("INSERT INTO site_members (site_id, user_id, role) VALUES ($1, $2, 'viewer')", [site.id, viewer.id]);
    const weekly = await choose(viewer, site.id, { frequency: 'weekly' });
    expect([weekly.status, weekly.body]).toEqual([200, { site_id: site.id, frequency: 'weekly' }]);
    const listed = await as(t, viewer, 'GET', '/api/user/email-reports');
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({
      items: [{ site_id: site.id, site_domain: 'reports.example', frequency: 'weekly', created_at: expect.any(String) }],
      total: 1,
      limit: 25,
      offset: 0,
      has_more: false,
    });
    expect((await choose(viewer, site.id, { frequency: 'monthly' })).body).toEqual({ site_id: site.id, frequency: 'monthly' });
    expect((await subscriptionsOf(viewer.id)).map((s) => s.frequency)).toEqual(['monthly']);
    expect((await choose(viewer, site.id, { frequency: 'off' })).body).toEqual({ site_id: site.id, frequency: 'off' });
    expect(await subscriptionsOf(viewer.id)).toEqual([]);
    expect((await as(t, viewer, 'GET', '/api/user/email-reports')).body).toMatchObject({ items: [], total: 0 });
  });

  it('refuses a frequency other than weekly, monthly or off with a JSON error, and stores nothing', async () => {
    const viewer = await person(t, 'user');
    await db().query("INSERT INTO site_members (site_id, user_id, role) VALUES ($1, $2, 'viewer')", [site.id, viewer.id]);
    for (const body of [{ frequency: 'daily' }, { frequency: 7 }, {}, { frequency: 'weekly', extra: true }, { frequency: 'WEEKLY' }]) {
      const res = await choose(viewer, site.id, body);
      expect([res.status, res.body.code]).toEqual([400, 'validation_failed']);
      expect(res.body.message).toEqual(expect.any(String));
    }
    expect(await subscriptionsOf(viewer.id)).toEqual([]);
  });

  it('answers 404 to a person who cannot see the site, and 400 for an id that is not one', async () => {
    const stranger = await person(t, 'user');
    const res = await choose(stranger, site.id, { frequency: 'weekly' });
    expect([res.status, res.body.code]).toEqual([404, 'not_found']);
    expect((await choose(stranger, 'not-a-uuid', { frequency: 'weekly' })).status).toBe(400);
    expect(await subscriptionsOf(stranger.id)).toEqual([]);
  });

  it('is for signed-in people: an API token is refused', async () => {
    const token = await t.token(['stats:read'], [{ siteId: site.id, role: 'viewer' }]);
    expect((await withToken(t, token, 'PUT', `/api/sites/${site.id}/email-report`, { frequency: 'weekly' })).status).toBe(403);
    expect((await withToken(t, token, 'GET', '/api/user/email-reports')).status).toBe(403);
  });
});

describe('the weekly report', () => {
  let viewer: Person;
  let mail: CapturedMail;

  beforeAll(async () => {
    viewer = await weeklyViewer();
    const outcomes = await queueDueReports(t.node.runtime, 1, NOW);
    expect(outcomes.get((await subscriptionsOf(viewer.id))[0].id)).toBe('queued');
    [mail] = await smtp.waitFor(viewer.email, 1, 15_000);
  }, 60_000);

  it('covers last Monday to Sunday in the site’s time zone, with the stats API’s figures and their change', async () => {
    const q = new URLSearchParams({ from: WEEK.from, to: WEEK.to, compare: 'custom', compare_from: WEEK_BEFORE.from, compare_to: WEEK_BEFORE.to });
    const kpis = await as(t, viewer, 'GET', `/api/sites/${site.id}/stats/kpis?${q}`);
    expect(kpis.body).toMatchObject({ kpis: { visitors: 3, visits: 3, pageviews: 4, bounce_rate: 66.7 }, comparison: { kpis: { visitors: 2, visits: 2, pageviews: 3, bounce_rate: 50 } } });

    expect(mail.subject).toBe('Weekly report for reports.example: 2026-02-23 to 2026-03-01');
    expect(mail.text).toContain('from 2026-02-23 to 2026-03-01 (America/New_York)');
    expect(lineOf(mail, 'Visitors')).toBe('Visitors: 3 (+50%)');
    expect(lineOf(mail, 'Pageviews')).toBe('Pageviews: 4 (+33%)');
    expect(lineOf(mail, 'Visits')).toBe('Visits: 3 (+50%)');
    expect(lineOf(mail, 'Bounce rate')).toBe('Bounce rate: 66.7% (+16.7 pts)');
  });

  it('lists the top pages, top sources and goal conversions as the breakdowns and goal stats give them', async () => {
    const q = new URLSearchParams({ from: WEEK.from, to: WEEK.to, compare: 'custom', compare_from: WEEK_BEFORE.from, compare_to: WEEK_BEFORE.to, limit: '5' });
    const pages = await as(t, viewer, 'GET', `/api/sites/${site.id}/stats/breakdown?${q}&dimension=pages`);
    expect((pages.body.rows as { value: string; visitors: number; comparison: { visitors: number } }[]).map((r) => [r.value, r.visitors, r.comparison.visitors])).toEqual([
      ['/', 2, 2],
      ['/pricing', 2, 0],
    ]);
    const sources = await as(t, viewer, 'GET', `/api/sites/${site.id}/stats/breakdown?${q}&dimension=sources`);
    expect((sources.body.rows as { value: string; visitors: number }[]).map((r) => [r.value, r.visitors])).toEqual([
      ['Google', 2],
      ['Hacker News', 1],
    ]);
    const goals = await as(t, viewer, 'GET', `/api/sites/${site.id}/goals/stats?from=${WEEK.from}&to=${WEEK.to}`);
    expect((goals.body.rows as { name: string; conversions: number }[]).map((r) => [r.name, r.conversions])).toEqual([['Saw pricing', 2]]);

    const section = (title: string) => mail.text.split('\n\n').find((part) => part.startsWith(`${title}:`));
    expect(section('Top pages')).toBe('Top pages:\n  /: 2 (no change)\n  /pricing: 2 (new)');
    expect(section('Top sources')).toBe('Top sources:\n  Google: 2 (+100%)\n  Hacker News: 1 (no change)');
    expect(section('Goal conversions')).toBe('Goal conversions:\n  Saw pricing: 2 (new)');
    expect(mail.html).toContain('<td style="padding:4px 12px 4px 0;border-bottom:1px solid #e5e5e5">/pricing</td>');
    expect(mail.html).not.toMatch(/<img|<script|src=/i);
  });

  it('carries the one-click unsubscribe headers, whose POST ends the subscription without a session', async () => {
    const link = /^<(https:\/\/analytics\.example\.org\/api\/email-reports\/unsubscribe\?token=[^>]+)>$/.exec(mail.headers['list-unsubscribe']);
    expect(link).not.toBeNull();
    expect(mail.headers['list-unsubscribe-post']).toBe('List-Unsubscribe=One-Click');
    // The bodies link to the dashboard's page for it (a button, no change on opening); the header to the API.
    const page = link![1].replace('/api/email-reports/', '/email-reports/');
    expect(mail.text).toContain(page);
    expect(mail.html).toContain(page.replaceAll('&', '&amp;'));
    const served = await fetch(page.replace(PUBLIC_URL, t.url), { headers: { Accept: 'text/html' } });
    expect([served.status, served.headers.get('content-type')]).toEqual([200, expect.stringContaining('text/html')]);
    const local = link![1].replace(PUBLIC_URL, t.url);

    const before = await request(local);
    expect([before.status, before.body]).toEqual([200, { subscribed: true, site_domain: 'reports.example', frequency: 'weekly' }]);
    const res = await request(local, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' });
    expect([res.status, res.body]).toEqual([200, { status: 'unsubscribed' }]);
    expect(await subscriptionsOf(viewer.id)).toEqual([]);
    // A second click says the same; the GET now says it has ended.
    expect((await request(local, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' })).status).toBe(200);
    expect((await request(local)).body).toEqual({ subscribed: false, site_domain: null, frequency: null });
  });

  it('refuses a forged or altered unsubscribe token with 404, and unsubscribes no one', async () => {
    const other = await weeklyViewer();
    const [{ id }] = await subscriptionsOf(other.id);
    for (const token of [id, `${id}.AAAA`, `${id}.${'A'.repeat(43)}`, 'x'.repeat(200)]) {
      const res = await request(`${t.url}/api/email-reports/unsubscribe?token=${encodeURIComponent(token)}`, { method: 'POST' });
      expect([res.status, res.body.code]).toEqual([404, 'not_found']);
    }
    expect((await request(`${t.url}/api/email-reports/unsubscribe?token=${'x'.repeat(201)}`, { method: 'POST' })).status).toBe(400);
    expect((await request(`${t.url}/api/email-reports/unsubscribe`, { method: 'POST' })).status).toBe(400);
    expect(await subscriptionsOf(other.id)).toEqual([{ id, frequency: 'weekly' }]);
  });
});

describe('exactly one report per period', () => {
  it('sends nothing more when the job runs again, or when a new leader runs it', async () => {
    const viewer = await weeklyViewer();
    const [{ id }] = await subscriptionsOf(viewer.id);
    // The leader of epoch 3 runs the job twice; then a new leader (epoch 4) takes over and runs it.
    const first = emailReportsJob(t.node.runtime, () => NOW);
    await first.start(3);
    await first.stop();
    expect((await queueDueReports(t.node.runtime, 3, NOW)).get(id)).toBe('already_sent');
    const next = emailReportsJob(t.node.runtime, () => NOW);
    await next.start(4);
    await next.stop();
    expect((await queueDueReports(t.node.runtime, 4, NOW)).get(id)).toBe('already_sent');

    await smtp.waitFor(viewer.email, 1, 15_000);
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(smtp.to(viewer.email)).toHaveLength(1);
    const sends = await db().query<{ period_start: string; period_end: string; epoch: string }>(
      "SELECT to_char(period_start, 'YYYY-MM-DD') AS period_start, to_char(period_end, 'YYYY-MM-DD') AS period_end, epoch::text FROM email_report_sends WHERE subscription_id = $1",
      [id],
    );
    expect(sends.rows).toEqual([{ period_start: WEEK.from, period_end: WEEK.to, epoch: '3' }]);
    // The next week is a new period: one more report.
    expect((await queueDueReports(t.node.runtime, 4, new Date('2026-03-09T12:00:00Z'))).get(id)).toBe('queued');
    await smtp.waitFor(viewer.email, 2, 15_000);
  }, 60_000);

  it('sends the month once the person changes to monthly, whatever weeks were sent', async () => {
    const viewer = await weeklyViewer();
    const [{ id }] = await subscriptionsOf(viewer.id);
    // Monday 1 June 2026 begins both a week and a month.
    expect((await queueDueReports(t.node.runtime, 5, new Date('2026-06-10T12:00:00Z'))).get(id)).toBe('queued');
    expect((await choose(viewer, site.id, { frequency: 'monthly' })).status).toBe(200);
    await db().query("UPDATE email_report_subscriptions SET created_at = '2026-06-15T00:00:00Z' WHERE id = $1", [id]);
    expect((await queueDueReports(t.node.runtime, 5, new Date('2026-07-02T12:00:00Z'))).get(id)).toBe('queued');
    const mails = await smtp.waitFor(viewer.email, 2, 15_000);
    expect(mails.map((m) => m.subject).sort()).toEqual(['Monthly report for reports.example: 2026-06-01 to 2026-06-30', 'Weekly report for reports.example: 2026-06-01 to 2026-06-07']);
    const monthly = mails.find((m) => m.subject.startsWith('Monthly'))!;
    expect(monthly.text).toContain('compared with the month before');
  }, 60_000);

  it('does not send a period that ended before the person subscribed', async () => {
    const viewer = await person(t, 'user');
    await db().query("INSERT INTO site_members (site_id, user_id, role) VALUES ($1, $2, 'viewer')", [site.id, viewer.id]);
    await choose(viewer, site.id, { frequency: 'weekly' });
    const [{ id }] = await subscriptionsOf(viewer.id);
    expect((await queueDueReports(t.node.runtime, 5, NOW)).get(id)).toBe('not_due');
  });
});

describe('a person who lost access to the site', () => {
  it('gets no more reports, and no longer sees the subscription', async () => {
    const viewer = await weeklyViewer();
    const [{ id }] = await subscriptionsOf(viewer.id);
    await db().query('DELETE FROM site_members WHERE site_id = $1 AND user_id = $2', [site.id, viewer.id]);
    expect((await queueDueReports(t.node.runtime, 6, NOW)).get(id)).toBe('no_access');
    expect((await db().query('SELECT 1 FROM email_report_sends WHERE subscription_id = $1', [id])).rowCount).toBe(0);
    expect((await as(t, viewer, 'GET', '/api/user/email-reports')).body).toMatchObject({ items: [], total: 0 });
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(smtp.to(viewer.email)).toEqual([]);
  });
});
