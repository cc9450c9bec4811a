-- Verify history-search:search_reveals_flush_target on pg
BEGIN;

SELECT flush_target FROM history.search_reveals WHERE false;

ROLLBACK;
