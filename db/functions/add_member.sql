-- add_member: open a membership of an account in a conversation from p_since.
-- HS004 while a different membership is open, when p_since falls inside an
-- earlier membership, or when a direct conversation would get a third party.
CREATE OR REPLACE FUNCTION history.add_member(
    p_conversation_id text,
    p_account_id      text,
    p_since           timestamptz,
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
    v_kind         text;
    v_open_since   timestamptz;
    v_last_until   timestamptz;
BEGIN
    PERFORM history._require_time('p_since', p_since);
    -- Serialise membership changes of one conversation.
    SELECT c.kind INTO v_kind FROM history.conversations c WHERE c.conversation_key = v_conversation AND c.tenant_key = v_tenant FOR UPDATE;

    SELECT m.since INTO v_open_since
      FROM history.memberships m
     WHERE m.conversation_key = v_conversation AND m.tenant_key = v_tenant AND m.account_key = v_account AND m.until IS NULL;
    IF FOUND THEN
        IF v_open_since = p_since THEN
            RETURN;  -- repeats the recorded call
        END IF;
        RAISE EXCEPTION 'account % is already a member of % since %', quote_literal(p_account_id),
                quote_literal(p_conversation_id), v_open_since
            USING ERRCODE = 'HS004', HINT = 'Call remove_member first.';
    END IF;

    SELECT max(m.until) INTO v_last_until
      FROM history.memberships m
     WHERE m.conversation_key = v_conversation AND m.tenant_key = v_tenant AND m.account_key = v_account;
    IF v_last_until > p_since THEN
        RAISE EXCEPTION 'membership of % in % from % overlaps an earlier one ending %', quote_literal(p_account_id),
                quote_literal(p_conversation_id), p_since, v_last_until
            USING ERRCODE = 'HS004';
    END IF;

    IF v_kind = 'direct' AND (
        SELECT count(DISTINCT m.account_key) FROM history.memberships m
         WHERE m.conversation_key = v_conversation AND m.tenant_key = v_tenant AND m.account_key <> v_account) >= 2 THEN
        RAISE EXCEPTION 'direct conversation % already has two parties; % cannot join', quote_literal(p_conversation_id),
                quote_literal(p_account_id)
            USING ERRCODE = 'HS004';
    END IF;

    INSERT INTO history.memberships (tenant_key, conversation_key, account_key, since)
    VALUES (v_tenant, v_conversation, v_account, p_since);
END
$function$;

COMMENT ON FUNCTION history.add_member(text, text, timestamptz, text) IS
    'Open a membership [p_since, ...); idempotent for the same open membership, HS004 on conflict';
REVOKE ALL ON FUNCTION history.add_member(text, text, timestamptz, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION history.add_member(text, text, timestamptz, text) TO history_runtime;
