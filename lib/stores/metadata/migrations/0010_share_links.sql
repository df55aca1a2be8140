-- 0010: read-only share links of a site (POST/GET/DELETE /api/sites/{id}/share, /api/share/{token}).
-- The token is shown once and stored as its SHA-256 only, like API-client tokens; an optional
-- password is a scrypt hash. Revoking keeps the row (revoked_at) so the audit entry still names it.
CREATE TABLE IF NOT EXISTS share_links (
  id uuid PRIMARY KEY,
  site_id uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
  name text,
  token_hash bytea NOT NULL UNIQUE,
  password_hash text,
  expires_at timestamptz,
  created_by uuid REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz
);
CREATE INDEX IF NOT EXISTS share_links_site ON share_links (site_id, created_at DESC, id);
