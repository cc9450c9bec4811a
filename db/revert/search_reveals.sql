-- Revert history-search:search_reveals from pg
BEGIN;

DROP TABLE history.search_reveals;

COMMIT;
