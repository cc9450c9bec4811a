-- Revert history-search:roles
-- Roles are shared by every database of the cluster: drop each one only when
-- nothing depends on it any more (another database may still use it).
BEGIN;

DO $roles$
DECLARE
    r text;
BEGIN
    FOREACH r IN ARRAY ARRAY['history_digest_verifier', 'history_auditor', 'history_searcher', 'history_runtime', 'history_owner'] LOOP
        BEGIN
            EXECUTE pg_catalog.format('DROP ROLE IF EXISTS %I', r);
        EXCEPTION WHEN dependent_objects_still_exist THEN
            RAISE NOTICE 'role % is still used by another database; kept', r;
        END;
    END LOOP;
END
$roles$;

COMMIT;
