-- Deploy history-search:_newest_matches to pg
-- The functions live in db/functions/_local_shard.sql, _listed_rows.sql and _newest_matches.sql.
-- Reworked after v0.2.0: Every eligibility rule before the cap: skip rows whose lineage the audience may not see, and the run's context, before counting; the strategy chosen by the pure history._candidate_strategy
-- Reworked after v0.3.0: Citus: every statement names the tenant (tenant_key, the distribution column), so each runs on one shard
BEGIN;
SET LOCAL ROLE history_owner;

-- The signature gained the eligibility arguments: the old one goes.
DROP FUNCTION IF EXISTS history._newest_matches(tsquery, bigint, bigint[], tstzmultirange[], boolean, bigint[], timestamptz, timestamptz, integer, text);

\ir ../functions/_local_shard.sql
\ir ../functions/_listed_rows.sql
\ir ../functions/_newest_matches.sql

RESET ROLE;
COMMIT;
