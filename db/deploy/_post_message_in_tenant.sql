-- Deploy history-search:_post_message_in_tenant to pg
-- The function lives in db/functions/_post_message_in_tenant.sql.
-- Reworked after v0.4.0: A message's sources and lineage in one multi-row INSERT ... VALUES each, not a statement per row
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_post_message_in_tenant.sql

RESET ROLE;
COMMIT;
