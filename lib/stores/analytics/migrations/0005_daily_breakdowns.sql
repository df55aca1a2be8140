-- 0005: each closed UTC day's breakdown figures, so an unfiltered breakdown of a long range sums a
-- few rows a day instead of grouping every visit (lib/analytics/daily-breakdowns.ts counts them,
-- lib/analytics/query/daily-breakdowns.ts reads them). Derived data: counted again from `visits`.
--
-- A row holds, for one site, UTC day and dimension (the visits' column: `pages`, `referrer_source`,
-- `country`, …), what the breakdown gives for one value over that day's visits. A day's rows are
-- those of one state of its visits, named by `fingerprint`: a sum over the day's visit rows of
-- sign × a hash of the visit state, which a state and its cancellation cancel out of, so merges
-- leave it as it is and any stored change moves it. A query uses a day's rows only where the
-- day's fingerprint, computed from `visits` then, is the one they were counted from; other days
-- it reads from `visits`. Visitors are a day's distinct visitor ids: their sum over days is the
-- range's distinct visitors because Plumb's visitor ids change at each UTC midnight
-- (lib/ingest/salts.ts); days with imported visits, whose ids may span days, are never counted.
-- Replacing: two leaders in a hand-over may count the same day at once; their rows are the same,
-- merges keep one, and reads take one of each (day, fingerprint, dimension, value) meanwhile.
CREATE TABLE IF NOT EXISTS {db:Identifier}.daily_breakdowns
(
    site_id UUID,
    day Date,
    fingerprint Int64,
    dimension LowCardinality(String),
    value String,
    visitors UInt64,
    visits Int64,
    pageviews Int64,
    bounces Int64,
    duration_ms Int64
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (site_id, day, fingerprint, dimension, value);

-- One row per day counted into daily_breakdowns: the day's rows for that fingerprint are complete
-- (a value that no visit of the day has has no row).
CREATE TABLE IF NOT EXISTS {db:Identifier}.daily_breakdowns_days
(
    site_id UUID,
    day Date,
    fingerprint Int64
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (site_id, day, fingerprint);
