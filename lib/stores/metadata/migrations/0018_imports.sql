-- 0018: imports of another tool's data (or of a Plumb takeout) into a site. An import is a record
-- with a state (pending → validating → validated → running → completed, or failed), its files as
-- the uploader declared them (name, size, SHA-256) with how many bytes have arrived, and the bytes
-- themselves, staged here in chunks: any node of a cluster can take an upload chunk, and the
-- leader, which runs validation and the import, reads them back from the same place (see
-- docs/decisions.md). Everything goes with the site.
CREATE TABLE IF NOT EXISTS imports (
  id uuid PRIMARY KEY,
  site_id uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
  source text NOT NULL,
  state text NOT NULL CHECK (state IN ('pending', 'validating', 'validated', 'running', 'completed', 'failed')),
  created_by uuid NOT NULL,
  manifest jsonb,
  progress jsonb,
  error jsonb,
  -- The leader epoch that claimed the current step; a newer leader finding a step claimed by an
  -- older epoch knows that leader died (or was deposed) in the middle of it.
  claimed_epoch bigint,
  -- Runs interrupted by the death of their leader; each is cleaned up and started again, up to a limit.
  attempts integer NOT NULL DEFAULT 0,
  -- Goals and funnels the import created (a takeout carries its site's): deleted with the import.
  created_goals uuid[] NOT NULL DEFAULT '{}',
  created_funnels uuid[] NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  completed_at timestamptz
);
CREATE INDEX IF NOT EXISTS imports_site ON imports (site_id, created_at DESC);
CREATE INDEX IF NOT EXISTS imports_work ON imports (state) WHERE state IN ('validating', 'running');

CREATE TABLE IF NOT EXISTS import_files (
  import_id uuid NOT NULL REFERENCES imports (id) ON DELETE CASCADE,
  index integer NOT NULL CHECK (index >= 0),
  name text NOT NULL,
  size bigint NOT NULL CHECK (size >= 0),
  sha256 text NOT NULL,
  received bigint NOT NULL DEFAULT 0,
  complete boolean NOT NULL DEFAULT false,
  PRIMARY KEY (import_id, index)
);

-- A file's bytes as they arrived, one row per chunk, in order of offset.
CREATE TABLE IF NOT EXISTS import_chunks (
  import_id uuid NOT NULL,
  file_index integer NOT NULL,
  "offset" bigint NOT NULL,
  data bytea NOT NULL,
  PRIMARY KEY (import_id, file_index, "offset"),
  FOREIGN KEY (import_id, file_index) REFERENCES import_files (import_id, index) ON DELETE CASCADE
);
