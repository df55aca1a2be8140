// The leader job that queues scheduled reports: hourly (and as leadership starts), for every
// subscription whose last complete period has no report yet, it computes the figures and, in one
// fenced transaction, records the (subscription, period) row and queues the message. The row's
// primary key makes a second run, on this leader or the next one after a failover, find the
// period taken and send nothing; a deposed leader's transaction is refused by the fence.
import type { LeaderJob } from '../../cluster/leader-jobs.ts';
import { siteRoleOf } from '../auth/access.ts';
import type { InstanceRole } from '../auth/roles.ts';
import { siteGoals } from '../goals/goals.ts';
import { enqueueMail } from '../mail/outbox.ts';
import { mailConfigured } from '../mail/transport.ts';
import type { Runtime } from '../runtime.ts';
import { tenantDatabase } from '../stores/analytics/index.ts';
import { type Frequency, reportPeriod } from './period.ts';
import { reportFigures } from './report.ts';
import { unsubscribeToken } from './subscriptions.ts';

const CHECK_EVERY_MS = 3_600_000;

interface Due {
  id: string;
  user_id: string;
  email: string;
  role: InstanceRole;
  site_id: string;
  team_id: string;
  domain: string;
  timezone: string;
  frequency: Frequency;
  created_at: Date;
}

const SUBSCRIPTIONS = `
  SELECT r.id, r.user_id, u.email, u.role, r.site_id, s.team_id, s.domain, s.timezone, r.frequency, r.created_at
    FROM email_report_subscriptions r
    JOIN users u ON u.id = r.user_id
    JOIN sites s ON s.id = r.site_id AND s.deleted_at IS NULL
   ORDER BY r.created_at, r.id`;

export type ReportOutcome = 'queued' | 'already_sent' | 'not_due' | 'no_access';

/**
 * One pass: queues the report of every subscription's last complete period at `now` that has
 * none yet. A period that ended before the person subscribed is not sent. Answers what became of
 * each subscription, by id.
 */
export async function queueDueReports(runtime: Pick<Runtime, 'metadata' | 'analytics' | 'fence' | 'jwtSecret' | 'log'>, epoch: number, now = new Date()): Promise<Map<string, ReportOutcome>> {
  const db = runtime.metadata();
  const outcomes = new Map<string, ReportOutcome>();
  const { rows } = await db.query<Due>(SUBSCRIPTIONS);
  for (const sub of rows) {
    try {
      outcomes.set(sub.id, await queueOne(runtime, epoch, sub, now));
    } catch (err) {
      // One site's failure (its store unreachable) leaves the others' reports alone; the next pass tries again.
      runtime.log.warn({ err, subscription: sub.id }, 'email report could not be queued; trying again at the next pass');
    }
  }
  return outcomes;
}

async function queueOne(runtime: Pick<Runtime, 'metadata' | 'analytics' | 'fence' | 'jwtSecret'>, epoch: number, sub: Due, now: Date): Promise<ReportOutcome> {
  const db = runtime.metadata();
  const period = reportPeriod(sub.frequency, sub.timezone, now);
  if (period.endedAt.getTime() <= new Date(sub.created_at).getTime()) return 'not_due';
  const taken = await db.query('SELECT 1 FROM email_report_sends WHERE subscription_id = $1 AND period_start = $2', [sub.id, period.current.from]);
  if (taken.rowCount > 0) return 'already_sent';
  const user = { id: sub.user_id, role: sub.role };
  if (!(await siteRoleOf(db, user, sub.site_id))) return 'no_access';
  const site = { id: sub.site_id, tenant: tenantDatabase(sub.team_id), timezone: sub.timezone };
  const figures = await reportFigures(runtime.analytics(), site, await siteGoals(db, sub.site_id), period.current, period.previous, now);
  return runtime.fence.run(epoch, async (tx) => {
    // Checked again where the row is written: the subscription may have ended, or access been lost, meanwhile.
    const still = await tx.query('SELECT 1 FROM email_report_subscriptions WHERE id = $1 AND frequency = $2 FOR UPDATE', [sub.id, sub.frequency]);
    if (still.rowCount === 0) return 'not_due';
    if (!(await siteRoleOf(tx, user, sub.site_id))) return 'no_access';
    const claimed = await tx.query(
      'INSERT INTO email_report_sends (subscription_id, period_start, period_end, epoch) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING',
      [sub.id, period.current.from, period.current.to, epoch],
    );
    if (claimed.rowCount === 0) return 'already_sent';
    const mailId = await enqueueMail(tx, {
      to: sub.email,
      template: 'email_report',
      params: {
        site_id: sub.site_id,
        site_domain: sub.domain,
        frequency: sub.frequency,
        from: period.current.from,
        to: period.current.to,
        timezone: sub.timezone,
        figures,
        unsubscribe_token: unsubscribeToken(runtime.jwtSecret, sub.id),
      },
    });
    await tx.query('UPDATE email_report_sends SET mail_id = $3 WHERE subscription_id = $1 AND period_start = $2', [sub.id, period.current.from, mailId]);
    return 'queued';
  });
}

/** Runs a pass as leadership starts and then hourly; the mail dispatcher's sweep sends what it queued. */
export function emailReportsJob(runtime: Runtime, clock: () => Date = () => new Date()): LeaderJob {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;
  return {
    start(epoch) {
      // Without an SMTP server a report would only be discarded: none is queued, and no period is marked sent.
      if (!mailConfigured(runtime.config)) return;
      const pass = () => {
        if (running) return;
        running = queueDueReports(runtime, epoch, clock())
          .catch((err: unknown) => runtime.log.warn({ err }, 'email reports pass failed; trying again in an hour'))
          .finally(() => (running = undefined));
      };
      timer = setInterval(pass, CHECK_EVERY_MS);
      timer.unref();
      pass();
    },
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
