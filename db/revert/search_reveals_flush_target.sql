-- Revert history-search:search_reveals_flush_target from pg
BEGIN;

ALTER TABLE history.search_reveals DROP COLUMN flush_target;

COMMIT;
