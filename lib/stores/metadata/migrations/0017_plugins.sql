-- What plugins keep in the metadata store besides their own tables: which of their migrations
-- are applied, and a small key-value state each. Rows stay when a plugin is disabled, so enabling
-- it again finds its data.
CREATE TABLE IF NOT EXISTS plugin_migrations (
  plugin text NOT NULL,
  version integer NOT NULL,
  name text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (plugin, version)
);
CREATE TABLE IF NOT EXISTS plugin_state (
  plugin text NOT NULL,
  key text NOT NULL,
  value jsonb NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (plugin, key)
);
