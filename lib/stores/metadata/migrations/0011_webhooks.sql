-- 0011: outbound webhooks. A webhook is instance-wide or belongs to one
-- site; its signing secret is sealed with a key derived from the JWT secret (lib/auth/secret-box.ts).
-- Deleting a webhook only marks it (deleted_at): its delivery history stays until retention.
CREATE TABLE IF NOT EXISTS webhooks (
  id uuid PRIMARY KEY,
  scope text NOT NULL CHECK (scope IN ('instance', 'site')),
  site_id uuid REFERENCES sites (id) ON DELETE CASCADE,
  name text NOT NULL,
  description text NOT NULL DEFAULT '',
  url text NOT NULL,
  events text[] NOT NULL CHECK (cardinality(events) >= 1),
  enabled boolean NOT NULL DEFAULT true,
  secret_sealed text NOT NULL,
  created_by uuid REFERENCES users (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  secret_rotated_at timestamptz NOT NULL DEFAULT now(),
  deleted_at timestamptz,
  CHECK ((scope = 'site') = (site_id IS NOT NULL))
);
CREATE INDEX IF NOT EXISTS webhooks_scope ON webhooks (scope, site_id, created_at) WHERE deleted_at IS NULL;

-- One row per operational event that at least one webhook wanted. The id is the envelope's `id`;
-- a re-emitted event (a replayed goal.converted) hits the primary key and queues nothing twice.
CREATE TABLE IF NOT EXISTS webhook_events (
  id uuid PRIMARY KEY,
  type text NOT NULL,
  site_id uuid,
  data jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS webhook_events_created ON webhook_events (created_at);

-- One row per event × webhook. `body` is the exact envelope sent on every attempt (the signature
-- covers those bytes); it never leaves the server except to the receiver.
-- pending → processing → succeeded | retrying → processing … → failed; cancelled when the webhook
-- is deleted. `claim_token` names one claim, so a late answer to a swept claim changes nothing.
CREATE TABLE IF NOT EXISTS webhook_deliveries (
  id uuid PRIMARY KEY,
  event_id uuid NOT NULL REFERENCES webhook_events (id) ON DELETE CASCADE,
  webhook_id uuid NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
  status text NOT NULL CHECK (status IN ('pending', 'processing', 'retrying', 'succeeded', 'failed', 'cancelled')),
  body text NOT NULL,
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  claim_token uuid,
  claimed_at timestamptz,
  lease_expires_at timestamptz,
  response_status integer,
  error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  completed_at timestamptz,
  UNIQUE (event_id, webhook_id)
);
CREATE INDEX IF NOT EXISTS webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status IN ('pending', 'retrying');
CREATE INDEX IF NOT EXISTS webhook_deliveries_in_flight ON webhook_deliveries (webhook_id, lease_expires_at) WHERE status = 'processing';
CREATE INDEX IF NOT EXISTS webhook_deliveries_history ON webhook_deliveries (webhook_id, created_at DESC, id);
CREATE INDEX IF NOT EXISTS webhook_deliveries_created ON webhook_deliveries (created_at);

-- Every attempt's outcome: the receiver's status code or a safe error category, and its duration.
-- An attempt cut short by a crash is recorded as 'interrupted' (duration unknown).
CREATE TABLE IF NOT EXISTS webhook_delivery_attempts (
  delivery_id uuid NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
  attempt integer NOT NULL,
  started_at timestamptz NOT NULL,
  duration_ms integer,
  response_status integer,
  error text
);
CREATE INDEX IF NOT EXISTS webhook_delivery_attempts_delivery ON webhook_delivery_attempts (delivery_id, started_at);
