-- What Search Console reports for a site, one row per day, dimension and key (a query, a page, a
-- country, a device). A day of a dimension is written whole by one insert carrying a version, and
-- reads take only the newest version of each (site, property, dimension, day): a day fetched again
-- (by a later run, or by a new leader after a failover mid-sync) replaces the older copy instead of
-- adding to it, and merges drop the replaced rows in the background.
CREATE TABLE IF NOT EXISTS {db:Identifier}.plugin_search_console_rows
(
  site_id UUID,
  property String,
  dimension LowCardinality(String),
  day Date,
  key String,
  clicks UInt64,
  impressions UInt64,
  -- position × impressions, so a range's average position is sum(position_sum) / sum(impressions).
  position_sum Float64,
  version UInt64
)
ENGINE = ReplacingMergeTree(version)
PARTITION BY toYYYYMM(day)
ORDER BY (site_id, property, dimension, day, key);
