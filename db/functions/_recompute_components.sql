-- _recompute_components: after proofs change around the given accounts,
-- relabel every account reachable from them through unrevoked proofs with
-- the smallest key of its component. The walk visits accounts, not paths.
-- Links join person accounts only: a proof with an agent at either end is
-- never walked, so an agent account is always a component of its own.
CREATE OR REPLACE FUNCTION history._recompute_components(p_accounts bigint[], p_tenant_key integer)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, history, pg_temp
AS $function$
DECLARE
    v_start     bigint;
    v_done      bigint[] := '{}';
    v_component bigint[];
BEGIN
    FOREACH v_start IN ARRAY p_accounts LOOP
        CONTINUE WHEN v_start = ANY (v_done);
        WITH RECURSIVE reach(account_key) AS (
            SELECT v_start
            UNION
            SELECT CASE WHEN p.account_a_key = r.account_key THEN p.account_b_key ELSE p.account_a_key END
              FROM reach r
              JOIN history.identity_proofs p
                ON (p.account_a_key = r.account_key OR p.account_b_key = r.account_key)
               AND p.revoked_at IS NULL AND p.tenant_key = p_tenant_key
             WHERE NOT EXISTS (SELECT FROM history.accounts x
                                WHERE x.account_key IN (p.account_a_key, p.account_b_key)
                                  AND x.tenant_key = p_tenant_key AND x.kind <> 'person')
        )
        SELECT array_agg(account_key) INTO v_component FROM reach;

        UPDATE history.accounts a
           SET component_key = (SELECT min(k) FROM unnest(v_component) k)
         WHERE a.account_key = ANY (v_component) AND a.tenant_key = p_tenant_key
           AND a.component_key <> (SELECT min(k) FROM unnest(v_component) k);
        v_done := v_done || v_component;
    END LOOP;
END
$function$;

COMMENT ON FUNCTION history._recompute_components(bigint[], integer) IS
    'Internal: relabel identity components after a link or revocation (person accounts only)';
REVOKE ALL ON FUNCTION history._recompute_components(bigint[], integer) FROM PUBLIC;
