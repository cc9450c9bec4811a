-- Revert history-search:_index_tenant_message from pg
BEGIN;

DROP FUNCTION history._index_tenant_message(bigint, text, integer);

COMMIT;
