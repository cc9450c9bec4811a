-- Revert history-search:search_history from pg
BEGIN;

DROP PROCEDURE history.search_history(uuid, text, text, timestamptz, timestamptz, integer, history.search_result);

COMMIT;
