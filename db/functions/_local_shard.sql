-- _local_shard: on Citus, the shard of distributed table p_table that holds
-- tenant p_tenant, when that shard is on this node (as in a search delegated
-- to the tenant's worker); otherwise, and without Citus, NULL. Its
-- statistics are what an estimate of the tenant's rows should use there: the
-- distributed table's, on a node, are an empty shell's.
CREATE OR REPLACE FUNCTION history._local_shard(p_table regclass, p_tenant integer)
RETURNS regclass
LANGUAGE plpgsql
STABLE
SET search_path = pg_catalog, history, pg_temp
AS $function$
DECLARE
    v_shard regclass;
    v_read  text;
BEGIN
    IF pg_catalog.current_setting('citus.version', true) IS NULL OR p_tenant IS NULL THEN
        RETURN NULL;
    END IF;
    -- Citus' functions exist only where Citus is installed: the statement is
    -- made from the catalog's entries for them (nothing checks it statically).
    SELECT pg_catalog.format('SELECT pg_catalog.to_regclass(pg_catalog.%I($1, pg_catalog.%I($1, $2)))',
                             n.proname, s.proname)
      INTO v_read
      FROM pg_catalog.pg_proc n, pg_catalog.pg_proc s
     WHERE n.proname = 'shard_name' AND n.pronamespace = 'pg_catalog'::regnamespace
       AND s.proname = 'get_shard_id_for_distribution_column' AND s.pronamespace = 'pg_catalog'::regnamespace
     LIMIT 1;
    IF v_read IS NULL THEN
        RETURN NULL;
    END IF;
    EXECUTE v_read INTO v_shard USING p_table, p_tenant;
    RETURN v_shard;
END
$function$;

COMMENT ON FUNCTION history._local_shard(regclass, integer) IS
    'Internal: on Citus, the tenant''s shard of a distributed table when it is on this node, else NULL';
REVOKE ALL ON FUNCTION history._local_shard(regclass, integer) FROM PUBLIC;
