-- 0016: the sites allowed to frame a share link's page (PATCH /api/sites/{id}/share/{shareId}).
-- Empty, the default, means no site may: a share page is embedded only where its owner said so.
ALTER TABLE share_links ADD COLUMN IF NOT EXISTS embed_origins text[] NOT NULL DEFAULT '{}';
