-- Verify history-search:audit_view_functions on pg
BEGIN;

SELECT 1 / (p.prosecdef AND NOT pg_catalog.has_function_privilege('public', p.oid, 'execute')
            AND pg_catalog.has_function_privilege('history_auditor', p.oid, 'execute'))::int
  FROM pg_catalog.pg_proc p
 WHERE p.oid IN ('history._search_audit_rows()'::regprocedure, 'history._search_audit_messages_rows()'::regprocedure,
                 'history._status_rows()'::regprocedure);

ROLLBACK;
