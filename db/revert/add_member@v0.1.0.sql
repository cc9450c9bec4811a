-- Revert history-search:add_member from pg
BEGIN;

DROP FUNCTION history.add_member(text, text, timestamptz);

COMMIT;
