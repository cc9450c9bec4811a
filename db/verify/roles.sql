-- Verify history-search:roles
BEGIN;

SELECT 1 / pg_catalog.count(*)::int / (pg_catalog.count(*) = 5)::int
  FROM pg_catalog.pg_roles
 WHERE rolname IN ('history_owner', 'history_runtime', 'history_searcher', 'history_auditor',
                   'history_digest_verifier')
   AND NOT rolcanlogin;

ROLLBACK;
