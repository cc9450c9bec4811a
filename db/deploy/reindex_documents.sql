-- Deploy history-search:reindex_documents to pg
-- requires: core_tables _document_vector _refresh_name_terms
-- The procedure lives in db/functions/reindex_documents.sql; its progress table is here.
BEGIN;
SET LOCAL ROLE history_owner;

-- One row: the re-index under way (finished_at null) or the last one.
CREATE TABLE history.reindex_progress (
    singleton        boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    started_at       timestamptz NOT NULL,
    -- Every projection row with a key up to this one has been rebuilt.
    last_message_key bigint NOT NULL,
    rows_done        bigint NOT NULL,
    rows_changed     bigint NOT NULL,
    finished_at      timestamptz
);
COMMENT ON TABLE history.reindex_progress IS 'Progress of history.reindex_documents (restart point)';

\ir ../functions/reindex_documents.sql

RESET ROLE;
COMMIT;
