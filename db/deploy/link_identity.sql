-- Deploy history-search:link_identity to pg
-- The function lives in db/functions/link_identity.sql.
-- Reworked after v0.1.0: A proof naming an agent account is HS001.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/link_identity.sql

RESET ROLE;
COMMIT;
