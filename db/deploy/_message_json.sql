-- Deploy history-search:_message_json to pg
-- The function lives in db/functions/_message_json.sql.
-- Reworked after v0.3.0: Citus: every statement names the tenant (tenant_key, the distribution column), so each runs on one shard
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_message_json.sql

RESET ROLE;
COMMIT;
