-- Revert history-search:_document_vector from pg
BEGIN;

DROP FUNCTION history._document_vector(text, regconfig);

COMMIT;
