-- Each site's notes settings: how long its notes are kept (null: for ever).
CREATE TABLE IF NOT EXISTS site_settings (
  site_id uuid PRIMARY KEY,
  retention_days integer,
  updated_at timestamptz NOT NULL DEFAULT now()
);
