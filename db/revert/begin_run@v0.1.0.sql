-- Revert history-search:begin_run from pg
BEGIN;

DROP FUNCTION history.begin_run(text, text, text, text, text[], text[]);

COMMIT;
