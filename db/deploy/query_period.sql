-- Deploy history-search:query_period to pg
-- requires: core_tables
-- requires: types
-- The period signal of the ranking (history._score): the time a query names
-- (history._query_period), the weight of a message sent in it and the
-- half-life of that weight outside it, and its place among a hit's components.
BEGIN;
SET LOCAL ROLE history_owner;

ALTER TABLE history.search_settings
    ADD COLUMN period_weight float8 NOT NULL DEFAULT 0.3 CHECK (period_weight >= 0),
    ADD COLUMN period_half_life interval NOT NULL DEFAULT '3 days' CHECK (period_half_life > interval '0');
COMMENT ON COLUMN history.search_settings.period_weight IS
    'Weight of a message sent in the period the query names ("in May 2023"; history._query_period)';
COMMENT ON COLUMN history.search_settings.period_half_life IS
    'Outside the named period, the period signal halves every period_half_life away from it';
ALTER TYPE history._ranked_candidate ADD ATTRIBUTE period float8;

\ir ../functions/_query_period.sql

RESET ROLE;
COMMIT;
