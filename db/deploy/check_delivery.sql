-- Deploy history-search:check_delivery to pg
-- The function lives in db/functions/check_delivery.sql.
-- Reworked after v0.1.0: The delivery audience of a check without a reply: members open now, a future join counting.
-- Reworked after v0.2.0: Errors name the run by its label, never its token
-- Reworked after v0.3.0: Finds the run's tenant in run_tokens (on Citus a local read, not one of every shard)
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/check_delivery.sql

RESET ROLE;
COMMIT;
