-- A site's link to a Google Search Console property: the account's refresh token (sealed with the
-- plugin's secret box, bound to the site), the property chosen, and how far the daily sync got.
CREATE TABLE connections (
  site_id uuid PRIMARY KEY,
  refresh_token text NOT NULL,
  connected_by text NOT NULL,
  connected_at timestamptz NOT NULL DEFAULT now(),
  property text,
  -- Every day up to this one is in the analytics tables for `property` (the last few are fetched again).
  synced_through date,
  sync_requested_at timestamptz,
  last_sync_started_at timestamptz,
  last_sync_finished_at timestamptz,
  last_error text
);
