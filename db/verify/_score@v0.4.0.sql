-- Verify history-search:_score on pg
BEGIN;

SELECT 'history._score(bigint[], tsvector[], bigint[], bigint[], timestamptz[], text[], text[], bigint[], bigint, bigint[], bigint[], history.search_settings, timestamptz, tstzrange, tsquery)'::regprocedure;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._score(bigint[], tsvector[], bigint[], bigint[], timestamptz[], text[], text[], bigint[], bigint, bigint[], bigint[], history.search_settings, timestamptz, tstzrange, tsquery)', 'execute'))::int;

ROLLBACK;
