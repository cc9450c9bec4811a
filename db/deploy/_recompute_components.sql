-- Deploy history-search:_recompute_components to pg
-- The function lives in db/functions/_recompute_components.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_recompute_components.sql

RESET ROLE;
COMMIT;
