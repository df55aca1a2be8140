-- Accounts and access: users (instance role, password, TOTP), remembered sign-ins, recovery
-- codes, passkeys, team and site memberships, invitations, and the team audit log.
CREATE TABLE IF NOT EXISTS users (
  id uuid PRIMARY KEY,
  -- stored lower-case; the unique index makes "Ana@x" and "ana@x" one account
  email text NOT NULL,
  -- scrypt$N$r$p$salt$hash; NULL for an account that signs in with passkeys only
  password_hash text,
  role text NOT NULL CHECK (role IN ('owner', 'admin', 'user')),
  -- bumped to end every session of the user (password or role change, MFA reset)
  session_epoch integer NOT NULL DEFAULT 0,
  totp_secret text,
  totp_pending_secret text,
  totp_enabled_at timestamptz,
  -- the last TOTP time step accepted, so a code cannot be replayed within its window
  totp_last_step bigint,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX IF NOT EXISTS users_email ON users (email);

CREATE TABLE IF NOT EXISTS remember_tokens (
  id uuid PRIMARY KEY,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  token_hash bytea NOT NULL UNIQUE,
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS remember_tokens_user ON remember_tokens (user_id);

CREATE TABLE IF NOT EXISTS recovery_codes (
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  code_hash bytea NOT NULL,
  used_at timestamptz,
  PRIMARY KEY (user_id, code_hash)
);

CREATE TABLE IF NOT EXISTS passkeys (
  id uuid PRIMARY KEY,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  -- base64url credential id, as WebAuthn reports it
  credential_id text NOT NULL UNIQUE,
  public_key bytea NOT NULL,
  counter bigint NOT NULL DEFAULT 0,
  transports text[] NOT NULL DEFAULT '{}',
  name text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz
);
CREATE INDEX IF NOT EXISTS passkeys_user ON passkeys (user_id);

CREATE TABLE IF NOT EXISTS team_members (
  team_id uuid NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  role text NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (team_id, user_id)
);
CREATE INDEX IF NOT EXISTS team_members_user ON team_members (user_id);

CREATE TABLE IF NOT EXISTS site_members (
  site_id uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  role text NOT NULL CHECK (role IN ('owner', 'admin', 'editor', 'viewer')),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (site_id, user_id)
);
CREATE INDEX IF NOT EXISTS site_members_user ON site_members (user_id);

CREATE TABLE IF NOT EXISTS invitations (
  id uuid PRIMARY KEY,
  team_id uuid NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
  email text NOT NULL,
  role text NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
  token_hash bytea NOT NULL UNIQUE,
  invited_by uuid REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  accepted_at timestamptz,
  revoked_at timestamptz
);
CREATE INDEX IF NOT EXISTS invitations_team ON invitations (team_id);

CREATE TABLE IF NOT EXISTS audit_log (
  id uuid PRIMARY KEY,
  team_id uuid NOT NULL,
  action text NOT NULL,
  actor_user_id uuid,
  actor_email text,
  target_user_id uuid,
  target_email text,
  details text NOT NULL DEFAULT '',
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS audit_log_team_time ON audit_log (team_id, created_at DESC, id);

-- API clients belong to a user; deleting the user deletes their tokens.
DELETE FROM api_clients WHERE owner_user_id IS NOT NULL AND owner_user_id NOT IN (SELECT id FROM users);
ALTER TABLE api_clients DROP CONSTRAINT IF EXISTS api_clients_owner;
ALTER TABLE api_clients ADD CONSTRAINT api_clients_owner FOREIGN KEY (owner_user_id) REFERENCES users (id) ON DELETE CASCADE;
