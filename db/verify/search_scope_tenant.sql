-- Verify history-search:search_scope_tenant on pg
BEGIN;

SELECT (NULL::history._search_scope).tenant_key;

ROLLBACK;
