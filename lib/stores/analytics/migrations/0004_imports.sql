-- 0004: imported data. Every raw table gets import_id, the import that wrote a row (the zero UUID
-- for rows Plumb collected itself), so deleting an import removes exactly what it added and a
-- failed import leaves nothing behind. The imported_* tables hold another tool's daily aggregates
-- (Plausible's CSV export, one table per file of that export, with its columns); the stats read
-- them for the days that have no native data. See docs/decisions.md.
ALTER TABLE {db:Identifier}.hits ADD COLUMN IF NOT EXISTS import_id UUID;
ALTER TABLE {db:Identifier}.events ADD COLUMN IF NOT EXISTS import_id UUID;
ALTER TABLE {db:Identifier}.visits ADD COLUMN IF NOT EXISTS import_id UUID;
ALTER TABLE {db:Identifier}.web_vitals ADD COLUMN IF NOT EXISTS import_id UUID;
ALTER TABLE {db:Identifier}.ai_fetches ADD COLUMN IF NOT EXISTS import_id UUID;

CREATE TABLE IF NOT EXISTS {db:Identifier}.imported_visitors
(
    site_id UUID,
    import_id UUID,
    date Date,
    visitors UInt64,
    pageviews UInt64,
    bounces UInt64,
    visits UInt64,
    visit_duration UInt64
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(date)
ORDER BY (site_id, date)
SETTINGS non_replicated_deduplication_window = 1000;

CREATE TABLE IF NOT EXISTS {db:Identifier}.imported_sources
(
    site_id UUID,
    import_id UUID,
    date Date,
    source String,
    referrer String,
    utm_source String,
    utm_medium String,
    utm_campaign String,
    utm_content String,
    utm_term String,
    pageviews UInt64,
    visitors UInt64,
    visits UInt64,
    visit_duration UInt64,
    bounces UInt32
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(date)
ORDER BY (site_id, date, source)
SETTINGS non_replicated_deduplication_window = 1000;

CREATE TABLE IF NOT EXISTS {db:Identifier}.imported_pages
(
    site_id UUID,
    import_id UUID,
    date Date,
    hostname String,
    page String,
    visits UInt64,
    visitors UInt64,
    pageviews UInt64,
    scroll_depth Nullable(UInt64),
    pageleave_visitors UInt64
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(date)
ORDER BY (site_id, date, hostname, page)
SETTINGS non_replicated_deduplication_window = 1000;

CREATE TABLE IF NOT EXISTS {db:Identifier}.imported_entry_pages
(
    site_id UUID,
    import_id UUID,
    date Date,
    entry_page String,
    visitors UInt64,
    entrances UInt64,
    visit_duration UInt64,
    bounces UInt32,
    pageviews UInt64
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(date)
ORDER BY (site_id, date, entry_page)
SETTINGS non_replicated_deduplication_window = 1000;

CREATE TABLE IF NOT EXISTS {db:Identifier}.imported_exit_pages
(
    site_id UUID,
    import_id UUID,
    date Date,
    exit_page String,
    visitors UInt64,
    visit_duration UInt64,
    exits UInt64,
    bounces UInt32,
    pageviews UInt64
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(date)
ORDER BY (site_id, date, exit_page)
SETTINGS non_replicated_deduplication_window = 1000;

CREATE TABLE IF NOT EXISTS {db:Identifier}.imported_locations
(
    site_id UUID,
    import_id UUID,
    date Date,
    country String,
    region String,
    city UInt64,
    visitors UInt64,
    visits UInt64,
    visit_duration UInt64,
    bounces UInt32,
    pageviews UInt64
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(date)
ORDER BY (site_id, date, country, region)
SETTINGS non_replicated_deduplication_window = 1000;

CREATE TABLE IF NOT EXISTS {db:Identifier}.imported_devices
(
    site_id UUID,
    import_id UUID,
    date Date,
    device String,
    visitors UInt64,
    visits UInt64,
    visit_duration UInt64,
    bounces UInt32,
    pageviews UInt64
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(date)
ORDER BY (site_id, date, device)
SETTINGS non_replicated_deduplication_window = 1000;

CREATE TABLE IF NOT EXISTS {db:Identifier}.imported_browsers
(
    site_id UUID,
    import_id UUID,
    date Date,
    browser String,
    browser_version String,
    visitors UInt64,
    visits UInt64,
    visit_duration UInt64,
    bounces UInt32,
    pageviews UInt64
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(date)
ORDER BY (site_id, date, browser)
SETTINGS non_replicated_deduplication_window = 1000;

CREATE TABLE IF NOT EXISTS {db:Identifier}.imported_operating_systems
(
    site_id UUID,
    import_id UUID,
    date Date,
    operating_system String,
    operating_system_version String,
    visitors UInt64,
    visits UInt64,
    visit_duration UInt64,
    bounces UInt32,
    pageviews UInt64
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(date)
ORDER BY (site_id, date, operating_system)
SETTINGS non_replicated_deduplication_window = 1000;

CREATE TABLE IF NOT EXISTS {db:Identifier}.imported_custom_events
(
    site_id UUID,
    import_id UUID,
    date Date,
    name String,
    link_url String,
    path String,
    visitors UInt64,
    events UInt64
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(date)
ORDER BY (site_id, date, name)
SETTINGS non_replicated_deduplication_window = 1000;
