-- 0001: the analytics tables of one tenant. {db:Identifier} is bound to the tenant database by
-- the runner (ClickHouse takes identifier parameters in DDL), so no name is spliced in here.
-- All are MergeTree, partitioned by month, ordered by site and day first (every query filters
-- on both). non_replicated_deduplication_window keeps the hashes of the last 1000 inserted
-- blocks, which is what makes insert_deduplication_token work on a non-replicated table:
-- a batch replayed with the same token is stored once.

-- Pageviews.
CREATE TABLE IF NOT EXISTS {db:Identifier}.hits
(
    ts DateTime64(3, 'UTC'),
    site_id UUID,
    session_id UInt64,
    visitor_id UInt64,
    hit_id UUID,
    path String,
    hostname String,
    referrer String,
    referrer_source LowCardinality(String),
    utm_source String,
    utm_medium String,
    utm_campaign String,
    utm_term String,
    utm_content String,
    country LowCardinality(String),
    region String,
    browser LowCardinality(String),
    browser_version String,
    os LowCardinality(String),
    os_version String,
    device LowCardinality(String),
    screen_width UInt16,
    engagement_ms UInt32,
    is_entry UInt8,
    source LowCardinality(String)
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(ts)
ORDER BY (site_id, toDate(ts), session_id, ts)
SETTINGS non_replicated_deduplication_window = 1000;

-- Custom and automatic events; props is a Map so any property can be broken down.
CREATE TABLE IF NOT EXISTS {db:Identifier}.events
(
    ts DateTime64(3, 'UTC'),
    site_id UUID,
    session_id UInt64,
    visitor_id UInt64,
    event_id UUID,
    name LowCardinality(String),
    path String,
    hostname String,
    referrer String,
    referrer_source LowCardinality(String),
    utm_source String,
    utm_medium String,
    utm_campaign String,
    utm_term String,
    utm_content String,
    country LowCardinality(String),
    region String,
    browser LowCardinality(String),
    os LowCardinality(String),
    device LowCardinality(String),
    props Map(String, String),
    revenue Nullable(Decimal(18, 4)),
    source LowCardinality(String)
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(ts)
ORDER BY (site_id, toDate(ts), name, session_id, ts)
SETTINGS non_replicated_deduplication_window = 1000;

-- Core Web Vitals samples (LCP, INP, CLS, FCP, TTFB).
CREATE TABLE IF NOT EXISTS {db:Identifier}.web_vitals
(
    ts DateTime64(3, 'UTC'),
    site_id UUID,
    session_id UInt64,
    path String,
    metric LowCardinality(String),
    value Float64,
    rating LowCardinality(String),
    device LowCardinality(String),
    country LowCardinality(String)
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(ts)
ORDER BY (site_id, toDate(ts), metric, path, ts)
SETTINGS non_replicated_deduplication_window = 1000;

-- Pages fetched by AI assistants and crawlers, reported by the site's server.
CREATE TABLE IF NOT EXISTS {db:Identifier}.ai_fetches
(
    ts DateTime64(3, 'UTC'),
    site_id UUID,
    fetch_id UUID,
    path String,
    url String,
    status_code UInt16,
    content_type String,
    response_time_ms UInt32,
    bytes UInt64,
    user_agent String,
    assistant_name LowCardinality(String),
    assistant_family LowCardinality(String),
    assistant_category LowCardinality(String),
    resource_type LowCardinality(String)
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(ts)
ORDER BY (site_id, toDate(ts), assistant_name, ts)
SETTINGS non_replicated_deduplication_window = 1000;
