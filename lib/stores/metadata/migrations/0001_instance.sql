-- Instance-wide settings and the leader fencing row. The cluster checks leader_epochs before any
-- leader-only side effect, so a node that lost its lease cannot act on a stale belief.
CREATE TABLE IF NOT EXISTS instance_settings (
  key text PRIMARY KEY,
  value jsonb NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS leader_epochs (
  name text PRIMARY KEY,
  epoch bigint NOT NULL,
  node_id text NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);
