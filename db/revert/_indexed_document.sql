-- Revert history-search:_indexed_document from pg
BEGIN;

DROP FUNCTION history._indexed_document(text, regconfig);

COMMIT;
