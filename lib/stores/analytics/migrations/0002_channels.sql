-- 0002: the acquisition channel of a visit (direct, search, social, email, ai, paid, referral),
-- next to referrer_source, which names the source (Google, ChatGPT, a hostname). Dashboards group
-- by channel ("AI assistants") without re-classifying referrers at query time.
ALTER TABLE {db:Identifier}.hits ADD COLUMN IF NOT EXISTS channel LowCardinality(String) AFTER referrer_source;
ALTER TABLE {db:Identifier}.events ADD COLUMN IF NOT EXISTS channel LowCardinality(String) AFTER referrer_source;
