-- begin_run: start one agent turn and return its unguessable token.
-- Everything the search will enforce is fixed here by the trusted runtime;
-- the model only ever holds the token.
CREATE OR REPLACE FUNCTION history.begin_run(
    p_agent_id           text,
    p_conversation_id    text,
    p_requester_id       text,
    p_current_message_id text,
    p_loaded_message_ids text[] DEFAULT '{}',
    p_audience           text[] DEFAULT NULL,
    p_tenant             text DEFAULT 'default'
) RETURNS uuid
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
    -- The run carries this tenant: every id it names, and all it later sees, are the tenant's.
    v_tenant       integer := history._tenant_key(p_tenant);
    v_agent        bigint := history._account_key('p_agent_id', p_agent_id, v_tenant);
    v_conversation bigint := history._conversation_key('p_conversation_id', p_conversation_id, v_tenant);
    v_requester    bigint := history._account_key('p_requester_id', p_requester_id, v_tenant);
    v_current      bigint := history._message_key('p_current_message_id', p_current_message_id, v_tenant);
    v_loaded       bigint[];
    v_explicit     bigint[];
    v_default      bigint[];
    v_run          history.runs;
BEGIN
    IF (SELECT a.kind FROM history.accounts a WHERE a.account_key = v_agent AND a.tenant_key = v_tenant) <> 'agent' THEN
        RAISE EXCEPTION 'account % is not an agent', quote_literal(p_agent_id) USING ERRCODE = 'HS001';
    END IF;
    IF p_loaded_message_ids IS NULL THEN
        RAISE EXCEPTION 'p_loaded_message_ids must be an array, got NULL'
            USING ERRCODE = 'HS001', HINT = 'Pass ''{}'' when nothing is loaded.';
    END IF;
    SELECT coalesce(array_agg(DISTINCT history._message_key('p_loaded_message_ids', id, v_tenant)), '{}')
      INTO v_loaded FROM unnest(p_loaded_message_ids) id;
    IF p_audience IS NOT NULL THEN
        SELECT coalesce(array_agg(DISTINCT history._account_key('p_audience', id, v_tenant)), '{}')
          INTO v_explicit FROM unnest(p_audience) id;
    END IF;
    -- Before the INSERT: on Citus its reads then run as statements of their own.
    IF v_explicit IS NULL THEN
        v_default := history._default_audience(v_conversation, v_agent, pg_catalog.now(), v_tenant);
    END IF;

    INSERT INTO history.runs (tenant_key, agent_key, conversation_key, requester_key, current_message_key,
                              loaded_message_keys, explicit_audience_keys, audience_keys)
    VALUES (v_tenant, v_agent, v_conversation, v_requester, v_current, v_loaded, v_explicit,
            coalesce(v_explicit, v_default))
    RETURNING * INTO v_run;
    -- The token's tenant, so that calls naming the run by its token alone find its shard.
    INSERT INTO history.run_tokens (run_token, tenant_key) VALUES (v_run.run_token, v_tenant);

    INSERT INTO history.run_trace (tenant_key, run_key, entry_kind, detail)
    VALUES (v_tenant, v_run.run_key, 'begin',
            jsonb_build_object('audience', CASE WHEN v_explicit IS NULL THEN 'default' ELSE 'explicit' END,
                               'audience_size', cardinality(v_run.audience_keys),
                               'loaded_messages', cardinality(v_loaded)));
    RETURN v_run.run_token;
END
$function$;

COMMENT ON FUNCTION history.begin_run(text, text, text, text, text[], text[], text) IS
    'Begin an agent turn (agent, destination, requester, current and loaded messages, audience); returns the run token';
REVOKE ALL ON FUNCTION history.begin_run(text, text, text, text, text[], text[], text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION history.begin_run(text, text, text, text, text[], text[], text) TO history_runtime;
