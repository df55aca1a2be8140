-- Cluster fencing and the JetStream ingest cursor.
--
-- leader_epoch holds the highest leader epoch that has claimed this database. Every leader-only
-- side effect runs in a transaction that first checks (and locks) this row: a deposed leader still
-- carrying an older epoch is refused here, at the resource, whatever it believes about itself.
CREATE TABLE IF NOT EXISTS leader_epoch (
  scope text PRIMARY KEY,
  epoch bigint NOT NULL,
  node_id text NOT NULL,
  claimed_at timestamptz NOT NULL DEFAULT now()
);

-- Where the leader's writer stands in an ingest stream: everything up to acked_seq is in the
-- analytics store. While a batch is being inserted its sequence range and deduplication token are
-- recorded first, so the next leader re-inserts exactly that batch with the same token and
-- ClickHouse stores it once.
CREATE TABLE IF NOT EXISTS ingest_stream_cursor (
  stream text PRIMARY KEY,
  acked_seq bigint NOT NULL DEFAULT 0,
  intent_first bigint,
  intent_last bigint,
  epoch bigint NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);
