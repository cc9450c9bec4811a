-- Verify history-search:_index_message on pg: retired (gone) since 0.4.0
BEGIN;

SELECT 1 / (pg_catalog.to_regprocedure('history._index_message(bigint, text)') IS NULL)::int;

ROLLBACK;
