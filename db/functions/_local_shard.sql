-- _local_shards: on Citus, for each distributed table of p_tables, the shard
-- that holds tenant p_tenant, when all those shards are on this node (as in
-- a call delegated to the tenant's worker); otherwise, and without Citus,
-- NULL. _local_shard is its one-table form.
--
-- Used where Citus' own handling of a statement costs more than the
-- statement: inside a delegated call a statement on a distributed table is
-- planned as a distributed query, deparsed to its shard and planned again
-- there, some 0.1 to 1 ms each; the same statement on the shard is planned
-- once (docs/scale-out.md, "Ingest"). The shard's statistics are also what an
-- estimate of the tenant's rows should use there: the distributed table's, on
-- a node, are an empty shell's.
CREATE OR REPLACE FUNCTION history._local_shards(p_tables regclass[], p_tenant integer)
RETURNS regclass[]
LANGUAGE plpgsql
STABLE
SET search_path = pg_catalog, history, pg_temp
AS $function$
DECLARE
    v_shards regclass[];
    v_read   text;
BEGIN
    IF pg_catalog.current_setting('citus.version', true) IS NULL OR p_tenant IS NULL THEN
        RETURN NULL;
    END IF;
    -- Citus' functions exist only where Citus is installed: the statement is
    -- made from the catalog's entries for them (nothing checks it statically).
    SELECT pg_catalog.format('SELECT pg_catalog.array_agg(pg_catalog.to_regclass(pg_catalog.%I(t.t, '
                             'pg_catalog.%I(t.t, $2))) ORDER BY t.i) FROM unnest($1) WITH ORDINALITY t(t, i)',
                             n.proname, s.proname)
      INTO v_read
      FROM pg_catalog.pg_proc n, pg_catalog.pg_proc s
     WHERE n.proname = 'shard_name' AND n.pronamespace = 'pg_catalog'::regnamespace
       AND s.proname = 'get_shard_id_for_distribution_column' AND s.pronamespace = 'pg_catalog'::regnamespace
     LIMIT 1;
    IF v_read IS NULL THEN
        RETURN NULL;
    END IF;
    EXECUTE v_read INTO v_shards USING p_tables, p_tenant;
    IF pg_catalog.array_position(v_shards, NULL) IS NOT NULL THEN
        RETURN NULL;  -- a shard elsewhere: the caller reads the distributed tables
    END IF;
    RETURN v_shards;
END
$function$;

COMMENT ON FUNCTION history._local_shards(regclass[], integer) IS
    'Internal: on Citus, the tenant''s shard of each distributed table when it is on this node, else NULL';
REVOKE ALL ON FUNCTION history._local_shards(regclass[], integer) FROM PUBLIC;

CREATE OR REPLACE FUNCTION history._local_shard(p_table regclass, p_tenant integer)
RETURNS regclass
LANGUAGE sql
STABLE
SET search_path = pg_catalog, history, pg_temp
RETURN (history._local_shards(ARRAY[p_table], p_tenant))[1];

COMMENT ON FUNCTION history._local_shard(regclass, integer) IS
    'Internal: on Citus, the tenant''s shard of a distributed table when it is on this node, else NULL';
REVOKE ALL ON FUNCTION history._local_shard(regclass, integer) FROM PUBLIC;
