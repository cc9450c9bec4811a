-- Deploy history-search:_index_message to pg
-- requires: _index_tenant_message
-- Reworked after v0.4.0: Retired: nothing calls it since _index_tenant_message (0.3.0), which names the tenant
-- (post_message, edits, deletes and reindex_documents all write the projection
-- through history._index_tenant_message now; a function nothing calls is only
-- surface to keep right).
BEGIN;
SET LOCAL ROLE history_owner;

DROP FUNCTION history._index_message(bigint, text);

RESET ROLE;
COMMIT;
