-- Deploy history-search:reindex_documents to pg
-- requires: core_tables _document_vector _refresh_name_terms
-- The procedure lives in db/functions/reindex_documents.sql.
-- Reworked after v0.3.0: Citus: tenant by tenant, every statement names the tenant; the progress keeps the tenant too (reindex_progress.last_tenant_key)
BEGIN;
SET LOCAL ROLE history_owner;

-- Every projection row of a tenant before this one, and of this one up to
-- last_message_key, has been rebuilt. A re-index of the previous release left
-- unfinished starts over (0: before every tenant).
ALTER TABLE history.reindex_progress ADD COLUMN last_tenant_key integer NOT NULL DEFAULT 0;
UPDATE history.reindex_progress SET last_message_key = 0, rows_done = 0, rows_changed = 0 WHERE finished_at IS NULL;

\ir ../functions/reindex_documents.sql

RESET ROLE;
COMMIT;
