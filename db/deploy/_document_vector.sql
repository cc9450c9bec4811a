-- Deploy history-search:_document_vector to pg
-- The function lives in db/functions/_document_vector.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_document_vector.sql

RESET ROLE;
COMMIT;
