-- Verify history-search:schema on pg
BEGIN;

SELECT 1 / pg_catalog.has_schema_privilege('history_searcher', 'history', 'usage')::int;
SELECT 1 / (n.nspowner = 'history_owner'::regrole)::int FROM pg_catalog.pg_namespace n WHERE n.nspname = 'history';
SELECT 'history.hmac(bytea, bytea, text)'::regprocedure;

ROLLBACK;
