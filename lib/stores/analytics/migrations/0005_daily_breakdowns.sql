-- 0005: each closed UTC day's breakdown figures, so an unfiltered breakdown of a long range sums a
-- few rows a day instead of grouping every visit (lib/analytics/daily-breakdowns.ts counts them,
-- lib/analytics/query/daily-breakdowns.ts reads them). Derived data: counted again from `visits`.
--
-- A row holds, for one site, UTC day and dimension (the visits' column: `pages`, `referrer_source`,
-- `country`, …), what the breakdown gives for one value over that day's visits (the dimension
-- `visits`, value '', holds the day's KPIs, with engagement_ms, 0 elsewhere), as one count of
-- the day (`count_id`, random) made it. Each count is listed in daily_breakdowns_days with the
-- `fingerprint` of the visits it counted: a sum over the day's visit rows of sign × a hash of the
-- visit state, which a state and its cancellation cancel out of, so merges leave it as it is and
-- any stored change moves it. A query sums a day's rows only where the day's fingerprint,
-- computed from `visits` then, is that of a listed count (the lowest id, if two leaders in a
-- hand-over counted it); other days it reads from `visits`. Visitors are a day's distinct
-- visitor ids: their sum over days is the range's distinct visitors because Plumb's visitor ids
-- change at each UTC midnight (lib/ingest/salts.ts); days with imported visits, whose ids may
-- span days, are never counted.
CREATE TABLE IF NOT EXISTS {db:Identifier}.daily_breakdowns
(
    site_id UUID,
    day Date,
    count_id UInt64,
    dimension LowCardinality(String),
    value String,
    visitors UInt64,
    visits Int64,
    pageviews Int64,
    bounces Int64,
    duration_ms Int64,
    engagement_ms Int64
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (site_id, day, count_id, dimension, value);

-- One row per complete count of a day: its rows in daily_breakdowns are all there (a value that
-- no visit of the day has has no row), counted from the visits whose fingerprint it records.
CREATE TABLE IF NOT EXISTS {db:Identifier}.daily_breakdowns_days
(
    site_id UUID,
    day Date,
    fingerprint Int64,
    count_id UInt64
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (site_id, day);
