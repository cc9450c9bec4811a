-- Deploy history-search:run_tokens to pg
-- requires: run_tables
--
-- Which tenant each run token belongs to. A token is all a search, a
-- delivery check or an end_run is given, and runs are found by tenant: on
-- Citus (runs distributed by tenant_key) a lookup by token alone is a read
-- of every shard, and a search can be delegated to its tenant's worker only
-- once its tenant is known. This table has no tenant in its primary key, so
-- `history-search distribute` makes it a reference table (a copy on every
-- node, read locally). begin_run writes a row, purge deletes it with its run.
BEGIN;
SET LOCAL ROLE history_owner;

CREATE TABLE history.run_tokens (
    run_token  uuid PRIMARY KEY,
    tenant_key integer NOT NULL REFERENCES history.tenants
);
COMMENT ON TABLE history.run_tokens IS 'Internal: the tenant of each run token (a reference table on Citus)';

INSERT INTO history.run_tokens (run_token, tenant_key)
SELECT r.run_token, r.tenant_key FROM history.runs r;

RESET ROLE;
COMMIT;
