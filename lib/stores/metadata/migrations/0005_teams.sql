-- Team management.

-- At most one open invitation per team and email, so two admins inviting the same person at once
-- cannot both succeed (the loser gets 409). An expired invitation is closed (revoked_at set) in the
-- same transaction that replaces it, so it never blocks a new one.
CREATE UNIQUE INDEX IF NOT EXISTS invitations_open_email ON invitations (team_id, email) WHERE accepted_at IS NULL AND revoked_at IS NULL;

-- Audit entries are listed newest first in the order they were written: entries of one
-- transaction share now(), and PGlite's clock ticks in whole milliseconds, so the timestamp alone
-- cannot order them. A sequence can.
ALTER TABLE audit_log ADD COLUMN IF NOT EXISTS seq bigserial;
CREATE INDEX IF NOT EXISTS audit_log_team_order ON audit_log (team_id, created_at DESC, seq DESC);
