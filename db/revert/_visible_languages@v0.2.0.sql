-- Revert history-search:_visible_languages from pg
BEGIN;

DROP FUNCTION history._visible_languages(bigint, bigint[], bigint);

COMMIT;
