-- Deploy history-search:_indexed_document to pg
-- The function lives in db/functions/_indexed_document.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_indexed_document.sql

RESET ROLE;
COMMIT;
