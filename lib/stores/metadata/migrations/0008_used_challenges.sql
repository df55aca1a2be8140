-- Sign-in challenge tokens are stateless and signed; this remembers the ones already used until
-- they expire, so a captured passkey assertion or MFA answer cannot be replayed.
CREATE TABLE IF NOT EXISTS used_challenges (
  jti text PRIMARY KEY,
  expires_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS used_challenges_expiry ON used_challenges (expires_at);
