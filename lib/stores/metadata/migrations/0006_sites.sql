-- 0006: moves of sites between teams (POST /api/sites/{id}/transfer-team). One row per move: the
-- partial unique index lets only one move of a site run at a time, on every node of a cluster,
-- and the row tells operators how a move ended (failed, or moved with source clean-up pending).
CREATE TABLE IF NOT EXISTS site_transfers (
  id uuid PRIMARY KEY,
  site_id uuid NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
  source_team_id uuid NOT NULL,
  destination_team_id uuid NOT NULL,
  actor_user_id uuid,
  -- running → completed | cleanup_pending | failed; abandoned when a node died mid-move
  status text NOT NULL CHECK (status IN ('running', 'completed', 'cleanup_pending', 'failed', 'abandoned')),
  error text,
  started_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz
);
CREATE UNIQUE INDEX IF NOT EXISTS site_transfers_one_running ON site_transfers (site_id) WHERE status = 'running';
