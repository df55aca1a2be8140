-- The AI plugin's records. A run keeps what an audit needs and nothing a provider could be made
-- to leak: hashes of the request and of the answer, never their text; usage; a safe error
-- category, never an error body; and only the output that passed validation.
CREATE TABLE IF NOT EXISTS runs (
  id uuid PRIMARY KEY,
  site_id uuid NOT NULL,
  feature text NOT NULL,
  provider text NOT NULL,
  model text NOT NULL,
  range_from date NOT NULL,
  range_to date NOT NULL,
  -- queued: accepted, not started; running; completed; failed (error_category says why).
  status text NOT NULL CHECK (status IN ('queued', 'running', 'completed', 'failed')),
  error_category text,
  requested_by text,
  input_sha256 text,
  output_sha256 text,
  requests integer NOT NULL DEFAULT 0,
  input_tokens integer,
  output_tokens integer,
  candidates integer,
  opportunities integer,
  -- The validated structured output: keys, params and cited evidence ids.
  output jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz
);
CREATE INDEX IF NOT EXISTS runs_created ON runs (created_at DESC);
-- At most one run asked for or under way per site.
CREATE UNIQUE INDEX IF NOT EXISTS runs_one_active ON runs (site_id) WHERE status IN ('queued', 'running');

-- A run's lifecycle: queued, requested, validated or rejected, saved, failed.
CREATE TABLE IF NOT EXISTS run_events (
  id bigserial PRIMARY KEY,
  run_id uuid NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  event text NOT NULL,
  at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS run_events_run ON run_events (run_id, id);

-- Opportunities as the dashboard shows them: an approved key with its params, and the evidence
-- rows the detector found that the provider cited.
CREATE TABLE IF NOT EXISTS opportunities (
  id uuid PRIMARY KEY,
  site_id uuid NOT NULL,
  run_id uuid NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  kind text NOT NULL,
  message_key text NOT NULL,
  params jsonb NOT NULL,
  evidence jsonb NOT NULL,
  rank integer NOT NULL,
  status text NOT NULL DEFAULT 'new' CHECK (status IN ('new', 'saved', 'done', 'dismissed')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS opportunities_site ON opportunities (site_id, status, created_at DESC);
