-- link_identity: record a verified proof that two accounts are one person.
-- The link counts from this commit; p_verified_at is recorded, not compared.
-- Repeating a recorded proof exactly is a no-op; a different one is HS004.
-- Only person accounts are linked: a proof naming an agent is HS001.
CREATE OR REPLACE FUNCTION history.link_identity(
    p_proof_id    text,
    p_account_a   text,
    p_account_b   text,
    p_verified_at timestamptz,
    p_tenant      text DEFAULT 'default'
) RETURNS void
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, history, pg_temp
-- Results, errors and audit values never depend on the caller's session settings.
SET extra_float_digits = 1
SET DateStyle = 'ISO, MDY'
SET IntervalStyle = postgres
SET TimeZone = 'UTC'
SET standard_conforming_strings = on
AS $function$
DECLARE
    v_tenant   integer := history._tenant_key(p_tenant);
    -- Both accounts in the one tenant: a proof never joins two tenants.
    v_a        bigint := history._account_key('p_account_a', p_account_a, v_tenant);
    v_b        bigint := history._account_key('p_account_b', p_account_b, v_tenant);
    v_existing history.identity_proofs;
BEGIN
    PERFORM history._require_id('p_proof_id', p_proof_id);
    PERFORM history._require_time('p_verified_at', p_verified_at);
    IF v_a = v_b THEN
        RAISE EXCEPTION 'a proof links two different accounts; both are %', quote_literal(p_account_a)
            USING ERRCODE = 'HS001';
    END IF;
    -- Links join person accounts only: linked to an agent's account, a person
    -- would see every direct conversation the agent holds.
    IF (SELECT a.kind FROM history.accounts a WHERE a.account_key = v_a AND a.tenant_key = v_tenant) <> 'person' THEN
        RAISE EXCEPTION 'account % is an agent; a proof links person accounts only', quote_literal(p_account_a)
            USING ERRCODE = 'HS001', DETAIL = 'p_account_a names an agent account.';
    END IF;
    IF (SELECT a.kind FROM history.accounts a WHERE a.account_key = v_b AND a.tenant_key = v_tenant) <> 'person' THEN
        RAISE EXCEPTION 'account % is an agent; a proof links person accounts only', quote_literal(p_account_b)
            USING ERRCODE = 'HS001', DETAIL = 'p_account_b names an agent account.';
    END IF;
    -- One identity change at a time keeps components consistent. The lock is a
    -- row only the owner can touch: no client login can take or hold it.
    PERFORM 1 FROM history.write_locks l WHERE l.lock_name = 'identity_proofs' FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'history.write_locks has no ''identity_proofs'' row' USING ERRCODE = 'XX000',
            HINT = 'INSERT INTO history.write_locks VALUES (''identity_proofs'') as the owner.';
    END IF;

    SELECT * INTO v_existing FROM history.identity_proofs p WHERE p.proof_id = p_proof_id AND p.tenant_key = v_tenant;
    IF FOUND THEN
        IF least(v_existing.account_a_key, v_existing.account_b_key) = least(v_a, v_b)
           AND greatest(v_existing.account_a_key, v_existing.account_b_key) = greatest(v_a, v_b)
           AND v_existing.verified_at = p_verified_at THEN
            RETURN;  -- repeats the recorded proof (revoked or not)
        END IF;
        RAISE EXCEPTION 'proof % is already recorded with other accounts or time', quote_literal(p_proof_id)
            USING ERRCODE = 'HS004';
    END IF;

    INSERT INTO history.identity_proofs (tenant_key, proof_id, account_a_key, account_b_key, verified_at)
    VALUES (v_tenant, p_proof_id, v_a, v_b, p_verified_at);
    PERFORM history._recompute_components(ARRAY[v_a], v_tenant);
END
$function$;

COMMENT ON FUNCTION history.link_identity(text, text, text, timestamptz, text) IS
    'Record an identity proof linking two person accounts (counts until revoked); HS001 for an agent, HS004 for a conflicting proof id';
REVOKE ALL ON FUNCTION history.link_identity(text, text, text, timestamptz, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION history.link_identity(text, text, text, timestamptz, text) TO history_runtime;
