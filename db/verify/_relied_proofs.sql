-- Verify history-search:_relied_proofs on pg
BEGIN;

SELECT 'history._relied_proofs(integer, bigint, bigint[], bigint)'::regprocedure;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._relied_proofs(integer, bigint, bigint[], bigint)', 'execute'))::int;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._relied_proofs_of(integer, bigint[], bigint[], bigint)', 'execute'))::int;

ROLLBACK;
