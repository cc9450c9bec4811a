-- Deploy history-search:_index_tenant_message to pg
-- The function lives in db/functions/_index_tenant_message.sql.
-- Reworked after v0.3.0: The document and its HS001 for an over-long text from history._indexed_document, shared with post_message
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_index_tenant_message.sql

RESET ROLE;
COMMIT;
