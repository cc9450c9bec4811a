-- Verify history-search:schema on pg
BEGIN;

SELECT 1 / pg_catalog.has_schema_privilege('history_searcher', 'history', 'usage')::int;
SELECT 1 / (n.nspowner = 'history_owner'::regrole)::int FROM pg_catalog.pg_namespace n WHERE n.nspname = 'history';
-- The digest's HMAC gives RFC 4231's test case 2.
SELECT 1 / (history._hmac_sha256(pg_catalog.convert_to('what do ya want for nothing?', 'UTF8'),
                                 pg_catalog.convert_to('Jefe', 'UTF8'))
            = pg_catalog.decode('5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843', 'hex'))::int;
SELECT 1 / (NOT pg_catalog.has_function_privilege('public', 'history._hmac_sha256(bytea, bytea)', 'execute'))::int;

ROLLBACK;
