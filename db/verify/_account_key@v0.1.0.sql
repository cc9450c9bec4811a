-- Verify history-search:_account_key on pg
BEGIN;

SELECT 'history._account_key(text, text)'::regprocedure;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._account_key(text, text)', 'execute'))::int;

ROLLBACK;
