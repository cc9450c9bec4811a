-- Revert history-search:remove_member from pg
BEGIN;

DROP FUNCTION history.remove_member(text, text, timestamptz);

COMMIT;
