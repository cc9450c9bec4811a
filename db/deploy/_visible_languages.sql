-- Deploy history-search:_visible_languages to pg
-- requires: core_tables
-- The function lives in db/functions/_visible_languages.sql.
-- Reworked after v0.3.0: Citus: every statement names the tenant (tenant_key, the distribution column), so each runs on one shard
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_visible_languages.sql

RESET ROLE;
COMMIT;
