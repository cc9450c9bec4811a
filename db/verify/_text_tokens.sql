-- Verify history-search:_text_tokens on pg
BEGIN;

SELECT 'history._text_tokens(text)'::regprocedure;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._text_tokens(text)', 'execute'))::int;

ROLLBACK;
