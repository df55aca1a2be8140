-- Notes on a site, in the plugin's own schema (its SQL runs with that schema on the search path).
CREATE TABLE IF NOT EXISTS notes (
  id uuid PRIMARY KEY,
  site_id uuid NOT NULL,
  text text NOT NULL,
  author_email text,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS notes_site ON notes (site_id, created_at DESC);
