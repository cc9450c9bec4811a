-- Revert history-search:_tenant_key from pg
BEGIN;

DROP FUNCTION history._tenant_key(text, boolean);

COMMIT;
