-- Deploy history-search:link_identity to pg
-- The function lives in db/functions/link_identity.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/link_identity.sql

RESET ROLE;
COMMIT;
