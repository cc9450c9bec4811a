-- Verify history-search:_message_json on pg
BEGIN;

SELECT 'history._message_json(integer, bigint, bigint, bigint[], integer)'::regprocedure;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._message_json(integer, bigint, bigint, bigint[], integer)', 'execute'))::int;

SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._messages_json(integer, bigint[], bigint, bigint[], integer)', 'execute'))::int;

ROLLBACK;
