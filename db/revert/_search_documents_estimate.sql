-- Revert history-search:_search_documents_estimate from pg
BEGIN;

DROP FUNCTION history._search_documents_estimate();

COMMIT;
