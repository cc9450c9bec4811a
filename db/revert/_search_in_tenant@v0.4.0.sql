-- Revert history-search:_search_in_tenant from pg
BEGIN;

DROP FUNCTION history._search_in_tenant(integer, uuid, text, text, timestamptz, timestamptz, integer);

COMMIT;
