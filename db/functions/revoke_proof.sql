-- revoke_proof: end an identity proof; the link stops counting at this commit.
-- Waits for replies whose delivery check holds the proof (FOR SHARE).
-- Repeating the recorded revocation is a no-op; any other on a revoked proof is HS004.
CREATE OR REPLACE FUNCTION history.revoke_proof(
    p_proof_id text,
    p_at       timestamptz,
    p_tenant   text DEFAULT 'default'
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
    v_proof  history.identity_proofs;
    v_tenant integer := history._tenant_key(p_tenant);
BEGIN
    PERFORM history._require_id('p_proof_id', p_proof_id);
    PERFORM history._require_time('p_at', p_at);
    -- One identity change at a time keeps components consistent. The lock is a
    -- row only the owner can touch: no client login can take or hold it.
    PERFORM 1 FROM history.write_locks l WHERE l.lock_name = 'identity_proofs' FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'history.write_locks has no ''identity_proofs'' row' USING ERRCODE = 'XX000',
            HINT = 'INSERT INTO history.write_locks VALUES (''identity_proofs'') as the owner.';
    END IF;

    SELECT * INTO v_proof FROM history.identity_proofs p WHERE p.proof_id = p_proof_id AND p.tenant_key = v_tenant FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'unknown proof %', quote_literal(p_proof_id)
            USING ERRCODE = 'HS003', DETAIL = pg_catalog.format('p_proof_id names no proof of tenant %s.', quote_literal(p_tenant));
    END IF;
    IF v_proof.revoked_at IS NOT NULL THEN
        IF v_proof.revoked_at = p_at THEN
            RETURN;  -- repeats the recorded revocation
        END IF;
        RAISE EXCEPTION 'proof % was already revoked at %', quote_literal(p_proof_id), v_proof.revoked_at
            USING ERRCODE = 'HS004';
    END IF;

    UPDATE history.identity_proofs
       SET revoked_at = p_at, revoke_recorded_at = pg_catalog.now()
     WHERE proof_key = v_proof.proof_key AND tenant_key = v_tenant;
    PERFORM history._recompute_components(ARRAY[v_proof.account_a_key, v_proof.account_b_key], v_tenant);
END
$function$;

COMMENT ON FUNCTION history.revoke_proof(text, timestamptz, text) IS
    'Revoke an identity proof (the link stops counting); HS003 unknown, HS004 already revoked differently';
REVOKE ALL ON FUNCTION history.revoke_proof(text, timestamptz, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION history.revoke_proof(text, timestamptz, text) TO history_runtime;
