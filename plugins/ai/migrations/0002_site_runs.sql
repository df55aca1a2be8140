-- The site dashboard reads a site's latest runs every few seconds while a run may be going.
CREATE INDEX IF NOT EXISTS runs_site_created ON runs (site_id, created_at DESC);
