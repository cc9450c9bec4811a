-- Deploy history-search:_reveal_in_tenant to pg
-- The function lives in db/functions/_reveal_in_tenant.sql. It gained p_defer: the earlier signature goes first.
-- Reworked after v0.5.0: A reveal asked to defer does not wait for WAL other sessions inserted: it notes its flush target and returns NULL for the caller to commit; the flush target is taken after the search's commit
BEGIN;
SET LOCAL ROLE history_owner;

DROP FUNCTION history._reveal_in_tenant(integer, uuid, uuid, text);
\ir ../functions/_reveal_in_tenant.sql

RESET ROLE;
COMMIT;
