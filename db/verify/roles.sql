-- Verify history-search:roles
BEGIN;

SELECT 1 / pg_catalog.count(*)::int / (pg_catalog.count(*) = 4)::int
  FROM pg_catalog.pg_roles
 WHERE rolname IN ('history_owner', 'history_runtime', 'history_searcher', 'history_auditor')
   AND NOT rolcanlogin;

ROLLBACK;
