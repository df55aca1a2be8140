-- A team audit entry names what it concerned as it was named at the time: the site (id and domain)
-- and the object acted on (a goal, funnel, share link, webhook, or another team) with its id and
-- name, so the log still reads well after they are renamed or deleted. Entries written before
-- this migration have nulls here; their details say what they said then.
ALTER TABLE audit_log ADD COLUMN IF NOT EXISTS site_id uuid;
ALTER TABLE audit_log ADD COLUMN IF NOT EXISTS site_domain text;
ALTER TABLE audit_log ADD COLUMN IF NOT EXISTS subject_type text;
ALTER TABLE audit_log ADD COLUMN IF NOT EXISTS subject_id uuid;
ALTER TABLE audit_log ADD COLUMN IF NOT EXISTS subject_name text;
