-- Deploy history-search:_audience_windows to pg
-- The function lives in db/functions/_audience_windows.sql (history._local_shards, which it calls, is deployed with _newest_matches).
-- Reworked after v0.3.0: Citus: every statement names the tenant (tenant_key, the distribution column), so each runs on one shard
-- Reworked after v0.5.0: On Citus, inside a call delegated to the tenant's worker, the windows are read from the tenant's shards by name: Citus' planning of the statement as a distributed query cost more than the statement
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_audience_windows.sql

RESET ROLE;
COMMIT;
