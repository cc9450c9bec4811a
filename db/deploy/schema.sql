-- Deploy history-search:schema to pg
-- requires: roles
BEGIN;

CREATE SCHEMA history AUTHORIZATION history_owner;
COMMENT ON SCHEMA history IS 'history-search: conversation-history search for AI agents';

-- pgcrypto gives hmac() for the audit digest and gen_random_bytes() for keys.
CREATE EXTENSION IF NOT EXISTS pgcrypto WITH SCHEMA history;
-- Extension functions are executable by PUBLIC; nothing outside the owner needs them.
DO $revoke$
DECLARE
    f regprocedure;
BEGIN
    FOR f IN
        SELECT p.oid::regprocedure
          FROM pg_catalog.pg_proc p
          JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
          JOIN pg_catalog.pg_extension e ON e.oid = d.refobjid AND e.extname = 'pgcrypto'
    LOOP
        EXECUTE pg_catalog.format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', f);
        EXECUTE pg_catalog.format('GRANT EXECUTE ON FUNCTION %s TO history_owner', f);
    END LOOP;
END
$revoke$;

-- Every function the owner creates here starts private; each file grants what it must.
-- (Per-schema defaults can only add privileges, so this one is database-wide.)
ALTER DEFAULT PRIVILEGES FOR ROLE history_owner REVOKE EXECUTE ON FUNCTIONS FROM PUBLIC;

GRANT USAGE ON SCHEMA history TO history_runtime, history_searcher, history_auditor, history_digest_verifier;

COMMIT;
