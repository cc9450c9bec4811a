-- Revert history-search:reindex_documents from pg
BEGIN;

DROP PROCEDURE history.reindex_documents(integer, boolean);
DROP TABLE history.reindex_progress;

COMMIT;
