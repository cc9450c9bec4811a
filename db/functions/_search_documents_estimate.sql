-- _search_documents_estimate: the planner's estimate of the rows of
-- history.message_search_documents (pg_class.reltuples, never below 0): what
-- history.status shows as search_documents_estimate and measures the
-- re-index's progress against. Counting tens of millions of rows for a status
-- line would take seconds.
--
-- On a Citus coordinator the table is an empty shell and its own estimate 0
-- (the re-index then read 100% after its first batch): the rows are in the
-- shards, so the estimate is the sum of the shards' (one catalog read on each
-- worker over the caller's connections; history._status_rows runs it as the
-- owner, whose connections reach the workers: docs/scale-out.md).
CREATE OR REPLACE FUNCTION history._search_documents_estimate()
RETURNS bigint
LANGUAGE plpgsql
STABLE
SET search_path = pg_catalog, history, pg_temp
AS $function$
DECLARE
    v_partitions regclass := pg_catalog.to_regclass('pg_catalog.pg_dist_partition');
    v_shards     regproc := pg_catalog.to_regproc('pg_catalog.run_command_on_shards');
    v_distributed boolean := false;
    v_estimate    bigint;
BEGIN
    -- Citus' catalog and functions exist only where Citus is installed: the
    -- statements are made from the catalog's entries for them (nothing checks
    -- them statically).
    IF v_partitions IS NOT NULL AND v_shards IS NOT NULL THEN
        EXECUTE pg_catalog.format('SELECT EXISTS (SELECT FROM %s p WHERE p.logicalrelid = $1)', v_partitions)
           INTO v_distributed USING 'history.message_search_documents'::regclass;
    END IF;
    IF v_distributed THEN
        EXECUTE pg_catalog.format(
            'SELECT pg_catalog.sum(GREATEST(r.result::float8, 0))::bigint FROM %s($1, $2) r WHERE r.success',
            v_shards)
           INTO v_estimate
          USING 'history.message_search_documents'::regclass,
                'SELECT c.reltuples FROM pg_catalog.pg_class c WHERE c.oid = ''%s''::pg_catalog.regclass';
    ELSE
        SELECT GREATEST(c.reltuples, 0)::bigint INTO v_estimate
          FROM pg_catalog.pg_class c WHERE c.oid = 'history.message_search_documents'::regclass;
    END IF;
    RETURN coalesce(v_estimate, 0);
END
$function$;

COMMENT ON FUNCTION history._search_documents_estimate() IS
    'Internal: the planner''s estimate of the search projection''s rows (on Citus, the sum of its shards'')';
REVOKE ALL ON FUNCTION history._search_documents_estimate() FROM PUBLIC;
