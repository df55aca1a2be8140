-- 0022: idempotency keys of AI-fetch ingest. A batch sent with an `Idempotency-Key` is claimed
-- here (answer NULL) before its fetches are appended to the journal, and the 202's answer is
-- saved once they are durable: the same key for the same site within 24 h gets that answer again
-- and stores nothing. `fingerprint` (SHA-256 of the items) tells a resend from another batch
-- that reuses the key. Keys older than 24 h are deleted by the leader's hourly ingest sweep.
CREATE TABLE IF NOT EXISTS idempotency_keys (
  site_id uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
  key text NOT NULL,
  fingerprint text NOT NULL,
  answer jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (site_id, key)
);
CREATE INDEX IF NOT EXISTS idempotency_keys_created ON idempotency_keys (created_at);
