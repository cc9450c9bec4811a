-- Revert history-search:link_identity from pg
BEGIN;

DROP FUNCTION history.link_identity(text, text, text, timestamptz);

COMMIT;
