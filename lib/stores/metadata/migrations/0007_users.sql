-- Instance-level audit: account administration (roles, MFA resets, deletions) and API-client
-- issue, rotation and removal happen outside any one team, so they cannot go in the team audit
-- log (team_id is required there). Emails are copied so an entry stays readable after a deletion.
CREATE TABLE IF NOT EXISTS instance_audit_log (
  id uuid PRIMARY KEY,
  action text NOT NULL,
  actor_user_id uuid,
  actor_email text,
  target_user_id uuid,
  target_email text,
  details text NOT NULL DEFAULT '',
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS instance_audit_log_time ON instance_audit_log (created_at DESC, id);
