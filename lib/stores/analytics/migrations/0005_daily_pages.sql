-- 0005: each closed UTC day's figures per page, so the pages breakdown of a long range sums a few
-- rows a day instead of unrolling every visit's pages (lib/analytics/daily-pages.ts builds them,
-- lib/analytics/query/daily-pages.ts reads them). Derived data: rebuilt from `visits`, never
-- exported or archived.
--
-- A day's rows are those of one state of its visits, named by `fingerprint`: a sum over the day's
-- visit rows of sign × a hash of the visit state, which a state and its cancellation cancel out
-- of, so merges leave it as it is and any stored change moves it. A query uses a day's rows only
-- where the day's fingerprint, computed from `visits` then, is the one they were counted from;
-- other days it reads from `visits`. Visitors are a day's distinct visitor ids: their sum over
-- days is the range's distinct visitors because Plumb's visitor ids change at each UTC midnight
-- (lib/ingest/salts.ts); imported visits, whose ids may span days, are never counted here.
-- Replacing: two leaders in a hand-over may count the same day at once; their rows are the same,
-- merges keep one, and reads take one of each (day, fingerprint, page) meanwhile.
CREATE TABLE IF NOT EXISTS {db:Identifier}.daily_pages
(
    site_id UUID,
    day Date,
    fingerprint Int64,
    page String,
    visitors UInt64,
    visits Int64,
    pageviews Int64,
    bounces Int64,
    duration_ms Int64
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (site_id, day, fingerprint, page);

-- One row per day counted into daily_pages: the day's rows for that fingerprint are complete
-- (a day whose visits have no pages has a row here and none there).
CREATE TABLE IF NOT EXISTS {db:Identifier}.daily_pages_days
(
    site_id UUID,
    day Date,
    fingerprint Int64
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (site_id, day, fingerprint);
