-- erase_account: forget every text an account wrote. Each created and edited
-- body of its messages is set to null (message_events.erased_at says when),
-- their search projection rows go, its display name and name terms go, and
-- each of its messages still alive gets a deleted event: the messages stay as
-- placeholders (id, conversation, author, sent_at, lineage) so conversation
-- order, lineage and audit ids hold, and search, neighbours and
-- check_delivery treat them as deleted. One transaction; idempotent (a repeat
-- finds no text and erases nothing); every call is logged in
-- history.account_erasures (account, time, who asked, how many). Returns how
-- many messages lost text in this call. HS003 for an unknown account.
CREATE OR REPLACE FUNCTION history.erase_account(p_account_id text, p_at timestamptz, p_tenant text DEFAULT 'default')
RETURNS integer
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
    v_account  bigint := history._account_key('p_account_id', p_account_id, v_tenant);
    v_touched  bigint[];
    v_again    bigint[];
    v_events   integer;
    v_events2  integer;
    v_messages integer;
BEGIN
    PERFORM history._require_time('p_at', p_at);
    -- FOR UPDATE waits for the account's posts in flight (their foreign-key
    -- check holds the row FOR KEY SHARE) and holds off new ones until commit,
    -- so no message of the account escapes; it also serialises erasures of it.
    PERFORM 1 FROM history.accounts a WHERE a.account_key = v_account AND a.tenant_key = v_tenant FOR UPDATE;

    -- Bodies and projection first, before any message row is locked: searches
    -- lock returned messages FOR SHARE, so the messages are locked last and briefly.
    WITH erased AS (
        UPDATE history.message_events e SET body = NULL, erased_at = p_at
          FROM history.messages m
         WHERE m.author_key = v_account AND m.tenant_key = v_tenant
           AND e.message_key = m.message_key AND e.tenant_key = v_tenant AND e.body IS NOT NULL
        RETURNING e.message_key
    )
    SELECT coalesce(array_agg(DISTINCT x.message_key), '{}'), count(*) INTO v_touched, v_events FROM erased x;
    DELETE FROM history.message_search_documents d USING history.messages m
     WHERE m.author_key = v_account AND m.tenant_key = v_tenant
       AND d.message_key = m.message_key AND d.tenant_key = v_tenant;

    -- Each live message gets a deleted event: search, neighbours and
    -- check_delivery already treat it as gone. FOR NO KEY UPDATE waits for an
    -- edit or delete in flight and lets evidence rows keep referencing it.
    WITH alive AS (
        SELECT m.message_key
          FROM history.messages m
          JOIN history.message_events e ON e.event_key = m.current_event_key AND e.tenant_key = v_tenant
         WHERE m.author_key = v_account AND m.tenant_key = v_tenant AND e.event_kind <> 'deleted'
         ORDER BY m.message_key
           FOR NO KEY UPDATE OF m
    ), deleted AS (
        INSERT INTO history.message_events (tenant_key, message_key, event_kind, body, occurred_at, erased_at)
        SELECT v_tenant, a.message_key, 'deleted', NULL, p_at, p_at FROM alive a
        RETURNING message_key, event_key
    )
    UPDATE history.messages m SET current_event_key = d.event_key
      FROM deleted d WHERE m.message_key = d.message_key AND m.tenant_key = v_tenant;

    -- An edit that committed while this ran (before its message was locked)
    -- wrote a body and a projection row after the first pass: erase them too.
    WITH erased AS (
        UPDATE history.message_events e SET body = NULL, erased_at = p_at
          FROM history.messages m
         WHERE m.author_key = v_account AND m.tenant_key = v_tenant
           AND e.message_key = m.message_key AND e.tenant_key = v_tenant AND e.body IS NOT NULL
        RETURNING e.message_key
    )
    SELECT coalesce(array_agg(DISTINCT x.message_key), '{}'), count(*) INTO v_again, v_events2 FROM erased x;
    DELETE FROM history.message_search_documents d USING history.messages m
     WHERE m.author_key = v_account AND m.tenant_key = v_tenant
       AND d.message_key = m.message_key AND d.tenant_key = v_tenant;

    -- The display name and the terms derived from it.
    UPDATE history.accounts a SET display_name = NULL
     WHERE a.account_key = v_account AND a.tenant_key = v_tenant AND a.display_name IS NOT NULL;
    PERFORM history._refresh_name_terms(ARRAY[v_account], false, v_tenant);

    SELECT count(*) INTO v_messages
      FROM (SELECT unnest(v_touched) UNION SELECT unnest(v_again)) t;
    INSERT INTO history.account_erasures (tenant_key, account_key, erased_at, messages_erased, events_erased)
    VALUES (v_tenant, v_account, p_at, v_messages, v_events + v_events2);
    RETURN v_messages;
END
$function$;

COMMENT ON FUNCTION history.erase_account(text, timestamptz, text) IS
    'Erase every text an account wrote (bodies, projection, name); its messages stay as deleted placeholders; logged; HS003 unknown';
REVOKE ALL ON FUNCTION history.erase_account(text, timestamptz, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION history.erase_account(text, timestamptz, text) TO history_runtime;
