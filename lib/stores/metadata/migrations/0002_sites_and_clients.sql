-- Teams own sites; a site's analytics live in its team's tenant database. API clients carry
-- scoped bearer tokens (stored as SHA-256 only). Account management (users, roles, invitations)
-- extends these tables in later migrations.
CREATE TABLE IF NOT EXISTS teams (
  id uuid PRIMARY KEY,
  name text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  archived_at timestamptz
);

CREATE TABLE IF NOT EXISTS sites (
  id uuid PRIMARY KEY,
  team_id uuid NOT NULL REFERENCES teams (id),
  -- canonical hostname: lower-case, "www." folded
  domain text NOT NULL,
  timezone text NOT NULL DEFAULT 'UTC',
  created_at timestamptz NOT NULL DEFAULT now(),
  deleted_at timestamptz
);
CREATE UNIQUE INDEX IF NOT EXISTS sites_live_domain ON sites (domain) WHERE deleted_at IS NULL;
CREATE INDEX IF NOT EXISTS sites_team ON sites (team_id);

-- Further browser origins accepted for a site: other domains it answers on, and first-party
-- tracking hosts. A hostname resolves to one site at most.
CREATE TABLE IF NOT EXISTS site_hostnames (
  hostname text PRIMARY KEY,
  site_id uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE
);

CREATE TABLE IF NOT EXISTS api_clients (
  id uuid PRIMARY KEY,
  owner_user_id uuid,
  name text NOT NULL,
  token_hash bytea NOT NULL UNIQUE,
  scopes text[] NOT NULL,
  expires_at timestamptz,
  revoked_at timestamptz,
  last_used_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- The sites an API client may act on, with the role it holds there (never above its owner's).
CREATE TABLE IF NOT EXISTS api_client_sites (
  api_client_id uuid NOT NULL REFERENCES api_clients (id) ON DELETE CASCADE,
  site_id uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
  role text NOT NULL CHECK (role IN ('owner', 'admin', 'editor', 'viewer')),
  PRIMARY KEY (api_client_id, site_id)
);

-- Daily salts for cookieless visitor ids; rows older than two days are deleted.
CREATE TABLE IF NOT EXISTS visitor_salts (
  day date PRIMARY KEY,
  salt bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- Requests refused at ingest (bots, unknown origins…) counted per site and day.
CREATE TABLE IF NOT EXISTS ingest_rejections (
  site_id uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
  day date NOT NULL,
  reason text NOT NULL,
  count bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (site_id, day, reason)
);
