-- Verify history-search:_conversation_key on pg
BEGIN;

SELECT 'history._conversation_key(text, text)'::regprocedure;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._conversation_key(text, text)', 'execute'))::int;

ROLLBACK;
