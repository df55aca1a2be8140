-- 0009: goals and funnels of a site. A goal is an event (name plus property conditions)
-- or a path pattern; a funnel is 2–8 ordered steps with a conversion window. Names are unique per
-- site so the dashboard and the webhooks can tell goals apart by name. Rows go with their site.
CREATE TABLE IF NOT EXISTS goals (
  id uuid PRIMARY KEY,
  site_id uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
  name text NOT NULL,
  type text NOT NULL CHECK (type IN ('event', 'path')),
  event_name text,
  -- [{"key": …, "value": …}], all must hold (AND); empty for path goals
  property_conditions jsonb NOT NULL DEFAULT '[]'::jsonb,
  path_pattern text,
  -- ISO 4217 code when the goal tracks revenue
  revenue_currency text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  -- Each type carries exactly its own matcher, whatever the API lets through.
  CHECK ((type = 'event' AND event_name IS NOT NULL AND path_pattern IS NULL)
      OR (type = 'path' AND path_pattern IS NOT NULL AND event_name IS NULL))
);
CREATE UNIQUE INDEX IF NOT EXISTS goals_site_name ON goals (site_id, name);

CREATE TABLE IF NOT EXISTS funnels (
  id uuid PRIMARY KEY,
  site_id uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
  name text NOT NULL,
  -- [{"type": "event"|"path", "event_name"|"path_pattern": …, "label"?: …}], in order
  steps jsonb NOT NULL,
  window_seconds integer NOT NULL CHECK (window_seconds BETWEEN 60 AND 2592000),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX IF NOT EXISTS funnels_site_name ON funnels (site_id, name);
