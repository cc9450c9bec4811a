-- Deploy history-search:_search_documents_estimate to pg
-- requires: core_tables
-- The function lives in db/functions/_search_documents_estimate.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_search_documents_estimate.sql

RESET ROLE;
COMMIT;
