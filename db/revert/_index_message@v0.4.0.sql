-- Revert history-search:_index_message from pg
BEGIN;

DROP FUNCTION history._index_message(bigint, text);

COMMIT;
