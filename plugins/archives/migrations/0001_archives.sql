-- Backups as the archives plugin tracks them (the target's manifests are the truth a restore
-- reads; these rows are the admin page's list and the scheduler's memory).
CREATE TABLE IF NOT EXISTS backups (
  id text PRIMARY KEY,
  -- requested: asked for, not started; running; completed; failed (error says why). A deleted backup's row goes with it.
  status text NOT NULL CHECK (status IN ('requested', 'running', 'completed', 'failed')),
  location text NOT NULL,
  requested_by text,
  started_at timestamptz,
  finished_at timestamptz,
  bytes bigint NOT NULL DEFAULT 0,
  rows bigint NOT NULL DEFAULT 0,
  files integer NOT NULL DEFAULT 0,
  error text,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS backups_created ON backups (created_at DESC);
-- At most one backup asked for or under way at a time.
CREATE UNIQUE INDEX IF NOT EXISTS backups_one_active ON backups ((true)) WHERE status IN ('requested', 'running');

-- Each site's retention: analytics rows older than this many days are archived, then deleted.
CREATE TABLE IF NOT EXISTS site_retention (
  site_id uuid PRIMARY KEY,
  retention_days integer CHECK (retention_days IS NULL OR retention_days BETWEEN 1 AND 36500),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- Rows moved out of the analytics store into the target: one file per site, table and run.
CREATE TABLE IF NOT EXISTS retention_archives (
  id uuid PRIMARY KEY,
  site_id uuid NOT NULL,
  table_name text NOT NULL,
  before timestamptz NOT NULL,
  rows bigint NOT NULL,
  bytes bigint NOT NULL,
  sha256 text NOT NULL,
  object_key text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS retention_archives_site ON retention_archives (site_id, created_at DESC);
