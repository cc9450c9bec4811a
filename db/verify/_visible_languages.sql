-- Verify history-search:_visible_languages on pg
BEGIN;

SELECT 'history._visible_languages(integer, bigint, bigint[], bigint)'::regprocedure;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._visible_languages(integer, bigint, bigint[], bigint)', 'execute'))::int;

ROLLBACK;
