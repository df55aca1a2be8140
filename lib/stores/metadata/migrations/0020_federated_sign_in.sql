-- Sign-in through other identity providers: the provider identities linked to an account (social
-- sign-in), the directory identities waiting for their owner to confirm the address by mail, and
-- each team's single sign-on connection with the email domains it answers for. No provider token
-- is ever stored: an identity is only the provider's stable key for the person.
CREATE TABLE IF NOT EXISTS user_identities (
  id uuid PRIMARY KEY,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  -- 'google', 'entra' or 'github' (lib/auth/federated/providers.ts)
  provider text NOT NULL,
  -- the provider's stable key: the OIDC issuer and sub, `<tid>/<oid>` for the directory, the numeric user id for GitHub
  subject text NOT NULL,
  -- the verified address the provider gave at linking (shown in the security settings)
  email text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  UNIQUE (provider, subject),
  UNIQUE (user_id, provider)
);
CREATE INDEX IF NOT EXISTS user_identities_user ON user_identities (user_id);

CREATE TABLE IF NOT EXISTS identity_confirmations (
  id uuid PRIMARY KEY,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  provider text NOT NULL,
  subject text NOT NULL,
  email text NOT NULL,
  token_hash bytea NOT NULL UNIQUE,
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS identity_confirmations_user ON identity_confirmations (user_id);

CREATE TABLE IF NOT EXISTS team_sso (
  team_id uuid PRIMARY KEY REFERENCES teams (id) ON DELETE CASCADE,
  issuer text NOT NULL,
  client_id text NOT NULL,
  -- sealed with the secret box (purpose 'team-sso', bound to the team id); never returned
  client_secret text NOT NULL,
  jit_enabled boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- A domain belongs to at most one team's connection: the email's domain finds the team.
CREATE TABLE IF NOT EXISTS team_sso_domains (
  domain text PRIMARY KEY,
  team_id uuid NOT NULL REFERENCES team_sso (team_id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS team_sso_domains_team ON team_sso_domains (team_id);
