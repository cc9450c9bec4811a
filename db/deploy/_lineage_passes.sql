-- Deploy history-search:_lineage_passes to pg
-- The function lives in db/functions/_lineage_passes.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_lineage_passes.sql

RESET ROLE;
COMMIT;
