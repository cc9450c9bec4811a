-- Revert history-search:search_scope_tenant from pg
BEGIN;
SET LOCAL ROLE history_owner;

ALTER TYPE history._search_scope DROP ATTRIBUTE tenant_key;

RESET ROLE;
COMMIT;
