-- Revert history-search:_search_reveal from pg
BEGIN;

DROP FUNCTION history._search_reveal(uuid, uuid, text);

COMMIT;
