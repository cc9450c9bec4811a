-- Deploy history-search:query_period to pg
-- requires: core_tables
-- requires: types
-- The period and tells_time signals of the ranking (history._score): the
-- time a query names (history._query_period), the weight of a message sent in
-- it and the half-life of that weight outside it; whether the query asks when
-- (history._query_asks_when) and the weight of a match that tells a time; and
-- their places among a hit's components.
BEGIN;
SET LOCAL ROLE history_owner;

ALTER TABLE history.search_settings
    ADD COLUMN period_weight float8 NOT NULL DEFAULT 0.3 CHECK (period_weight >= 0),
    ADD COLUMN period_half_life interval NOT NULL DEFAULT '3 days' CHECK (period_half_life > interval '0'),
    ADD COLUMN tells_time_weight float8 NOT NULL DEFAULT 0.2 CHECK (tells_time_weight >= 0);
COMMENT ON COLUMN history.search_settings.period_weight IS
    'Weight of a message sent in the period the query names ("in May 2023"; history._query_period)';
COMMENT ON COLUMN history.search_settings.period_half_life IS
    'Outside the named period, the period signal halves every period_half_life away from it';
COMMENT ON COLUMN history.search_settings.tells_time_weight IS
    'Weight of a match that tells a time (yesterday, last week, ago, ...) when the query asks when';
ALTER TYPE history._ranked_candidate ADD ATTRIBUTE period float8, ADD ATTRIBUTE tells_time float8;

\ir ../functions/_query_period.sql
\ir ../functions/_query_asks_when.sql

RESET ROLE;
COMMIT;
