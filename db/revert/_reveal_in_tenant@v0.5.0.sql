-- Revert history-search:_reveal_in_tenant from pg
BEGIN;

DROP FUNCTION history._reveal_in_tenant(integer, uuid, uuid, text);

COMMIT;
