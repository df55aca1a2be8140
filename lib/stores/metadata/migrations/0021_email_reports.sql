-- 0021: scheduled email reports. A person subscribes to a weekly or monthly summary of a site
-- they can see (one subscription per person and site; choosing "off" deletes it). The leader
-- queues each due report in one transaction with a row of `email_report_sends`, keyed by the
-- subscription and the period's first local day, so a period is mailed once even when a new
-- leader runs the job again after a failover.
CREATE TABLE IF NOT EXISTS email_report_subscriptions (
  id uuid PRIMARY KEY,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  site_id uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
  frequency text NOT NULL CHECK (frequency IN ('weekly', 'monthly')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (user_id, site_id)
);
CREATE INDEX IF NOT EXISTS email_report_subscriptions_site ON email_report_subscriptions (site_id);

-- One row per report queued: `period_start` is the local date the period begins (a Monday, or
-- the first of a month), `epoch` the leader epoch that queued it, `mail_id` its outbox message.
CREATE TABLE IF NOT EXISTS email_report_sends (
  subscription_id uuid NOT NULL REFERENCES email_report_subscriptions (id) ON DELETE CASCADE,
  period_start date NOT NULL,
  period_end date NOT NULL,
  mail_id uuid,
  epoch bigint NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (subscription_id, period_start)
);
