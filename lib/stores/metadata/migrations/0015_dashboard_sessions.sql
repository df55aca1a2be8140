-- Every dashboard sign-in session, so signing out (or a password or role change) ends it on the
-- server: a copied session cookie stops working at once, on every node, and cannot be extended.
CREATE TABLE IF NOT EXISTS dashboard_sessions (
  id uuid PRIMARY KEY,
  user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  revoked_at timestamptz
);
CREATE INDEX IF NOT EXISTS dashboard_sessions_user ON dashboard_sessions (user_id);
CREATE INDEX IF NOT EXISTS dashboard_sessions_expiry ON dashboard_sessions (expires_at);
