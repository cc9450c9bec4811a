-- Revert history-search:_recompute_components from pg: back to its @v0.1.0 version
-- (if the signature changed, drop the new function here first).
-- Deploy history-search:_recompute_components to pg
-- The function lives in db/functions/_recompute_components.sql.
BEGIN;
SET LOCAL ROLE history_owner;

-- _recompute_components: after proofs change around the given accounts,
-- relabel every account reachable from them through unrevoked proofs with
-- the smallest key of its component. The walk visits accounts, not paths.
CREATE OR REPLACE FUNCTION history._recompute_components(p_accounts bigint[])
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
               AND p.revoked_at IS NULL
        )
        SELECT array_agg(account_key) INTO v_component FROM reach;

        UPDATE history.accounts a
           SET component_key = (SELECT min(k) FROM unnest(v_component) k)
         WHERE a.account_key = ANY (v_component)
           AND a.component_key <> (SELECT min(k) FROM unnest(v_component) k);
        v_done := v_done || v_component;
    END LOOP;
END
$function$;

COMMENT ON FUNCTION history._recompute_components(bigint[]) IS 'Internal: relabel identity components after a link or revocation';
REVOKE ALL ON FUNCTION history._recompute_components(bigint[]) FROM PUBLIC;

RESET ROLE;
COMMIT;

-- Components as the earlier version walks them (through agent accounts too).
BEGIN;
SET LOCAL ROLE history_owner;
SELECT history._recompute_components(ARRAY(
    SELECT DISTINCT k
      FROM history.identity_proofs p
     CROSS JOIN LATERAL (VALUES (p.account_a_key), (p.account_b_key)) e(k)
     WHERE p.revoked_at IS NULL
       AND EXISTS (SELECT FROM history.accounts x
                    WHERE x.account_key IN (p.account_a_key, p.account_b_key) AND x.kind <> 'person')
     ORDER BY k));
RESET ROLE;
COMMIT;
