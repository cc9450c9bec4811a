-- Verify history-search:_message_key on pg
BEGIN;

SELECT 'history._message_key(text, text, integer)'::regprocedure;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._message_key(text, text, integer)', 'execute'))::int;

ROLLBACK;
