-- Revert history-search:verify_query_digest from pg
BEGIN;

DROP FUNCTION history.verify_query_digest(uuid, text);

COMMIT;
