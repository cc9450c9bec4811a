-- Deploy history-search:roles
-- Roles are cluster-wide: create each only if it is missing, so a second
-- database in the same cluster (tests, staging) deploys cleanly.
BEGIN;

-- One migration registry per database: a database that `history-search migrate`
-- (yoyo) has deployed is refused here, by the plan's first change, before sqitch
-- changes anything. (`migrate` refuses a sqitch-deployed database the same way.)
DO $one_registry$
DECLARE
    t regclass;
    migrated boolean;
BEGIN
    IF pg_catalog.to_regnamespace('history') IS NULL THEN
        RETURN;
    END IF;
    FOR t IN SELECT c.oid::regclass FROM pg_catalog.pg_class c
              WHERE c.relname = '_yoyo_migration' AND c.relkind IN ('r', 'p')
    LOOP
        IF pg_catalog.has_table_privilege(t, 'SELECT') THEN
            EXECUTE pg_catalog.format('SELECT EXISTS (SELECT 1 FROM %s WHERE migration_id = %L)', t, 'schema')
               INTO migrated;
            IF migrated THEN
                RAISE EXCEPTION 'this database was migrated by `history-search migrate` (yoyo registry %): keep using `history-search migrate` on it; sqitch can only deploy a database that has no schema history', t;
            END IF;
        END IF;
    END LOOP;
END
$one_registry$;

DO $roles$
DECLARE
    r text;
BEGIN
    FOREACH r IN ARRAY ARRAY['history_owner', 'history_runtime', 'history_searcher', 'history_auditor',
                            'history_digest_verifier'] LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = r) THEN
            EXECUTE pg_catalog.format('CREATE ROLE %I NOLOGIN', r);
        END IF;
    END LOOP;
    -- A migrating role that is not a superuser (it has CREATEROLE) runs the
    -- later changes as history_owner: it must be a member, and as the role's
    -- creator it may grant that to itself. (It owns the schema in all but name.)
    IF NOT (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user)
       AND NOT pg_catalog.pg_has_role('history_owner', 'MEMBER') THEN
        EXECUTE pg_catalog.format('GRANT history_owner TO %I', current_user);
    END IF;
END
$roles$;

COMMENT ON ROLE history_owner IS 'history-search: owns the schema, its tables and SECURITY DEFINER functions; never logs in';
COMMENT ON ROLE history_runtime IS 'history-search: trusted agent runtime (ingestion, runs, delivery, search)';
COMMENT ON ROLE history_searcher IS 'history-search: may call history.search_history and nothing else';
COMMENT ON ROLE history_auditor IS 'history-search: audit views; no message text, no run token';
COMMENT ON ROLE history_digest_verifier IS
    'history-search: may call history.verify_query_digest (an oracle for guessed query texts: grant explicitly)';

COMMIT;
