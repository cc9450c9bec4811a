-- Revert history-search:_message_json from pg
BEGIN;

DROP FUNCTION history._message_json(bigint, bigint, bigint[], integer);

COMMIT;
