-- remove_member: close the open membership of an account at p_until.
-- With nothing open it is HS004, unless it repeats the recorded removal.
CREATE OR REPLACE FUNCTION history.remove_member(
    p_conversation_id text,
    p_account_id      text,
    p_until           timestamptz,
    p_tenant          text DEFAULT 'default'
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
    v_tenant       integer := history._tenant_key(p_tenant);
    v_conversation bigint := history._conversation_key('p_conversation_id', p_conversation_id, v_tenant);
    v_account      bigint := history._account_key('p_account_id', p_account_id, v_tenant);
    v_membership   bigint;
    v_since        timestamptz;
BEGIN
    PERFORM history._require_time('p_until', p_until);
    PERFORM 1 FROM history.conversations c WHERE c.conversation_key = v_conversation AND c.tenant_key = v_tenant FOR UPDATE;

    SELECT m.membership_key, m.since INTO v_membership, v_since
      FROM history.memberships m
     WHERE m.conversation_key = v_conversation AND m.tenant_key = v_tenant AND m.account_key = v_account AND m.until IS NULL;
    IF NOT FOUND THEN
        IF EXISTS (SELECT 1 FROM history.memberships m
                    WHERE m.conversation_key = v_conversation AND m.tenant_key = v_tenant AND m.account_key = v_account
                      AND m.until = p_until
                      AND m.until = (SELECT max(l.until) FROM history.memberships l
                                      WHERE l.conversation_key = v_conversation AND l.tenant_key = v_tenant AND l.account_key = v_account)) THEN
            RETURN;  -- repeats the recorded call
        END IF;
        RAISE EXCEPTION 'account % has no open membership of %', quote_literal(p_account_id), quote_literal(p_conversation_id)
            USING ERRCODE = 'HS004';
    END IF;
    IF p_until < v_since THEN
        RAISE EXCEPTION 'p_until % is before the membership began (%)', p_until, v_since
            USING ERRCODE = 'HS001';
    END IF;

    UPDATE history.memberships m SET until = p_until WHERE m.membership_key = v_membership AND m.tenant_key = v_tenant;
END
$function$;

COMMENT ON FUNCTION history.remove_member(text, text, timestamptz, text) IS
    'Close the open membership at p_until; HS004 when none is open (unless repeating the last removal)';
REVOKE ALL ON FUNCTION history.remove_member(text, text, timestamptz, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION history.remove_member(text, text, timestamptz, text) TO history_runtime;
