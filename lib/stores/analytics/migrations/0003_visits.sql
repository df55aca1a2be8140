-- 0003: one row per visit, so the stats API reads visits without grouping pageviews by session.
-- The ingest writer stores a visit's new state (sign 1, next version) and cancels the state it
-- replaces (sign -1, same version as that state) with the batch of hits they come from; queries
-- sum with `sign`, and merges drop cancelled pairs in the background (VersionedCollapsingMergeTree
-- collapses a pair whatever order its rows were inserted in). A visit belongs to the day of its
-- first pageview (`start`, never changed once written), and its entry and acquisition columns are
-- those of that pageview; `pages`/`page_hits` (and the hostname pair) are the distinct paths of
-- its pageviews with how many each, sorted by path. See docs/decisions.md.
CREATE TABLE IF NOT EXISTS {db:Identifier}.visits
(
    site_id UUID,
    session_id UInt64,
    sign Int8,
    version UInt32,
    visitor_id UInt64,
    start DateTime64(3, 'UTC'),
    first_ts DateTime64(3, 'UTC'),
    last_ts DateTime64(3, 'UTC'),
    visit_pageviews UInt32,
    events UInt32,
    visit_engagement_ms UInt64,
    entry_page String,
    exit_page String,
    pages Array(String),
    page_hits Array(UInt32),
    hostnames Array(String),
    hostname_hits Array(UInt32),
    referrer String,
    referrer_source LowCardinality(String),
    channel LowCardinality(String),
    utm_source String,
    utm_medium String,
    utm_campaign String,
    utm_term String,
    utm_content String,
    country LowCardinality(String),
    region String,
    browser LowCardinality(String),
    os LowCardinality(String),
    device LowCardinality(String)
)
ENGINE = VersionedCollapsingMergeTree(sign, version)
PARTITION BY toYYYYMM(start)
ORDER BY (site_id, toDate(start), session_id)
SETTINGS non_replicated_deduplication_window = 1000;

-- Visits of the pageviews stored before this table existed (and the only statement of this file
-- that lib/analytics/visits.ts runs again to rebuild the table from hits and events).
INSERT INTO {db:Identifier}.visits
    (site_id, session_id, sign, version, visitor_id, start, first_ts, last_ts, visit_pageviews, events, visit_engagement_ms,
     entry_page, exit_page, pages, page_hits, hostnames, hostname_hits, referrer, referrer_source, channel,
     utm_source, utm_medium, utm_campaign, utm_term, utm_content, country, region, browser, os, device)
SELECT v.site_id, v.session_id, 1, 1, v.visitor_id, v.first_ts, v.first_ts, v.last_ts, v.pageviews, e.events, e.engagement_ms,
       v.entry_page, v.exit_page, v.pages, arrayMap(p -> toUInt32(countEqual(v.all_pages, p)), v.pages),
       v.hostnames, arrayMap(h -> toUInt32(countEqual(v.all_hostnames, h)), v.hostnames), v.referrer, v.referrer_source, v.channel,
       v.utm_source, v.utm_medium, v.utm_campaign, v.utm_term, v.utm_content, v.country, v.region, v.browser, v.os, v.device
  FROM (SELECT site_id, session_id,
               argMin(visitor_id, ts) AS visitor_id, min(ts) AS first_ts, max(ts) AS last_ts, toUInt32(count()) AS pageviews,
               argMin(path, ts) AS entry_page, argMax(path, ts) AS exit_page,
               -- The first 50 distinct pages (and hostnames) in time order, listed by name, as the
               -- ingest pipeline lists them (lib/ingest/visits.ts, MAX_VISIT_PAGES).
               groupArray(path) AS all_pages, groupArray(hostname) AS all_hostnames,
               arraySort(arraySlice(arrayDistinct(arrayMap(x -> x.2, arraySort(groupArray((ts, path))))), 1, 50)) AS pages,
               arraySort(arraySlice(arrayDistinct(arrayMap(x -> x.2, arraySort(groupArray((ts, hostname))))), 1, 50)) AS hostnames,
               argMin(referrer, ts) AS referrer, argMin(referrer_source, ts) AS referrer_source, argMin(channel, ts) AS channel,
               argMin(utm_source, ts) AS utm_source, argMin(utm_medium, ts) AS utm_medium, argMin(utm_campaign, ts) AS utm_campaign,
               argMin(utm_term, ts) AS utm_term, argMin(utm_content, ts) AS utm_content,
               argMin(country, ts) AS country, argMin(region, ts) AS region,
               argMin(browser, ts) AS browser, argMin(os, ts) AS os, argMin(device, ts) AS device
          FROM {db:Identifier}.hits
         GROUP BY site_id, session_id) AS v
  LEFT JOIN (SELECT site_id, session_id,
                    toUInt32(countIf(name != '$engagement')) AS events,
                    sumIf(toUInt64OrZero(props['engagement_ms']), name = '$engagement') AS engagement_ms
               FROM {db:Identifier}.events
              GROUP BY site_id, session_id) AS e
    ON e.site_id = v.site_id AND e.session_id = v.session_id
SETTINGS join_use_nulls = 0;
