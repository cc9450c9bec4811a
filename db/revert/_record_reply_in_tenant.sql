-- Revert history-search:_record_reply_in_tenant from pg
BEGIN;

DROP FUNCTION history._record_reply_in_tenant(integer, uuid, text, text, timestamptz);

COMMIT;
