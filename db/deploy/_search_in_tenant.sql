-- Deploy history-search:_search_in_tenant to pg
-- The function lives in db/functions/_search_in_tenant.sql.
-- Reworked after v0.4.0: The hits' neighbours from the window stage's walk (_ranking_pass.neighbours): only hits it did not walk are walked again
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_search_in_tenant.sql

RESET ROLE;
COMMIT;
