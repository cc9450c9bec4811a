-- Revert history-search:_identifier_parts from pg
BEGIN;

DROP FUNCTION history._identifier_parts(text);

COMMIT;
