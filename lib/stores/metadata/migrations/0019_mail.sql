-- 0019: mail. An outbox of messages (queued in the transaction of the change that causes them,
-- sent by the leader with retries; lib/mail/), and the single-use tokens that mail carries
-- (password reset, email change confirmation).
--
-- A message names its template and the template's params; it is rendered when sent. The params
-- can hold a link's secret token, so they are cleared once the message is finished (sent, failed
-- or discarded because this instance has no mail server).
-- pending → processing → sent | retrying → processing … → failed; discarded (no SMTP configured).
-- `claim_token` names one claim, so a late outcome of a swept claim changes nothing.
CREATE TABLE IF NOT EXISTS mail_messages (
  id uuid PRIMARY KEY,
  recipient text NOT NULL,
  template text NOT NULL,
  params jsonb NOT NULL,
  locale text NOT NULL DEFAULT 'en',
  status text NOT NULL CHECK (status IN ('pending', 'processing', 'retrying', 'sent', 'failed', 'discarded')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  claim_token uuid,
  claimed_at timestamptz,
  lease_expires_at timestamptz,
  error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  completed_at timestamptz
);
CREATE INDEX IF NOT EXISTS mail_messages_due ON mail_messages (next_attempt_at) WHERE status IN ('pending', 'retrying');
CREATE INDEX IF NOT EXISTS mail_messages_in_flight ON mail_messages (lease_expires_at) WHERE status = 'processing';
CREATE INDEX IF NOT EXISTS mail_messages_created ON mail_messages (created_at);

-- Single-use tokens sent by mail: only their SHA-256 is kept. `purpose` says what the token
-- proves: 'password_reset' (1 hour) or 'email_change' (24 hours, to `new_email`).
CREATE TABLE IF NOT EXISTS account_tokens (
  id uuid PRIMARY KEY,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  purpose text NOT NULL CHECK (purpose IN ('password_reset', 'email_change')),
  token_hash bytea NOT NULL UNIQUE,
  new_email text,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  CHECK ((purpose = 'email_change') = (new_email IS NOT NULL))
);
CREATE INDEX IF NOT EXISTS account_tokens_user ON account_tokens (user_id, purpose);
CREATE INDEX IF NOT EXISTS account_tokens_expiry ON account_tokens (expires_at);
