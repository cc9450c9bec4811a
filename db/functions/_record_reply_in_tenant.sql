-- _record_reply_in_tenant: record_reply's work in the run's tenant p_tenant
-- (its key), behind history.record_reply (which finds the tenant of the
-- run's token): the final delivery check, then the agent's reply posted into
-- the destination with the run's evidence as its lineage
-- (history._post_message_in_tenant), and the run ended. HS005 naming the
-- failing evidence when anything no longer passes: nothing is posted and the
-- run stays open. A default audience counts the members open now and those
-- who were members when the reply was sent.
--
-- On Citus `history-search distribute` delegates it by p_tenant, like the
-- search (docs/scale-out.md, "The reply on Citus"): every statement below
-- names the tenant and runs on the worker holding it, not one round trip
-- each from the coordinator. Executable by the owner alone.
CREATE OR REPLACE FUNCTION history._record_reply_in_tenant(
    p_tenant     integer,
    p_run        uuid,
    p_message_id text,
    p_body       text,
    p_sent_at    timestamptz
) RETURNS void
LANGUAGE plpgsql
SECURITY INVOKER  -- the owner alone may call it: its caller is a definer
SET search_path = pg_catalog, history, pg_temp
-- Results, errors and audit values never depend on the caller's session settings.
SET extra_float_digits = 1
SET DateStyle = 'ISO, MDY'
SET IntervalStyle = postgres
SET TimeZone = 'UTC'
SET standard_conforming_strings = on
AS $function$
DECLARE
    v_run          history.runs := history._lock_open_run(p_run);
    v_problems     text;
    v_sources      text[];
    v_conversation text;
    v_agent        text;
BEGIN
    IF v_run.tenant_key IS DISTINCT FROM p_tenant THEN  -- run_tokens and runs disagree: never silently
        RAISE EXCEPTION 'run % is not in tenant key %', history._run_label(p_run), p_tenant USING ERRCODE = 'internal_error';
    END IF;
    -- The reply's body is checked before the delivery check (the post checks it again).
    PERFORM history._require_body(p_body, p_message_id);
    PERFORM history._require_time('p_sent_at', p_sent_at);

    -- Hold every proof the evidence relied on: a concurrent revoke_proof
    -- waits for this transaction, or has committed and is seen below
    -- (40001 under REPEATABLE READ).
    PERFORM 1 FROM history.identity_proofs p
     WHERE p.tenant_key = p_tenant
       AND p.proof_key IN (SELECT unnest(ev.proof_keys) FROM history.run_evidence ev
                            WHERE ev.run_key = v_run.run_key AND ev.tenant_key = p_tenant)
       FOR SHARE;

    SELECT string_agg(pg_catalog.format('%s (%s)', d.message_id, d.reason), ', ' ORDER BY d.message_id)
      INTO v_problems
      FROM history._delivery_problems(v_run.run_key, v_run.agent_key, history._delivery_audience(v_run, p_sent_at),
                                     p_tenant) d;
    IF v_problems IS NOT NULL THEN
        RAISE EXCEPTION 'delivery blocked: evidence no longer passes: %', v_problems
            USING ERRCODE = 'HS005',
                  HINT = 'Search again, or reply without that evidence in a new run.';
    END IF;

    SELECT coalesce(array_agg(m.message_id ORDER BY m.message_id), '{}') INTO v_sources
      FROM history.run_evidence ev
      JOIN history.messages m ON m.message_key = ev.message_key AND m.tenant_key = p_tenant
     WHERE ev.run_key = v_run.run_key AND ev.tenant_key = p_tenant;
    -- The reply goes into the run's tenant, whose ids p_message_id and the sources are
    -- (read first: a statement calling a function that reads the tables reads none itself).
    SELECT c.conversation_id INTO v_conversation FROM history.conversations c
     WHERE c.conversation_key = v_run.conversation_key AND c.tenant_key = p_tenant;
    SELECT a.account_id INTO v_agent FROM history.accounts a
     WHERE a.account_key = v_run.agent_key AND a.tenant_key = p_tenant;
    PERFORM FROM history._post_message_in_tenant(p_tenant, p_message_id, v_conversation, v_agent, p_body, p_sent_at,
                                                 v_sources);

    UPDATE history.runs SET ended_at = pg_catalog.now() WHERE run_key = v_run.run_key AND tenant_key = p_tenant;
    INSERT INTO history.run_trace (tenant_key, run_key, entry_kind, detail)
    VALUES (p_tenant, v_run.run_key, 'delivery', jsonb_build_object('reply_message_id', p_message_id, 'sources', cardinality(v_sources))),
           (p_tenant, v_run.run_key, 'end', jsonb_build_object('evidence', v_run.evidence_count));
END
$function$;

COMMENT ON FUNCTION history._record_reply_in_tenant(integer, uuid, text, text, timestamptz) IS
    'Internal: record_reply in the run''s tenant (delegated to the tenant''s worker on Citus), behind history.record_reply';
REVOKE ALL ON FUNCTION history._record_reply_in_tenant(integer, uuid, text, text, timestamptz) FROM PUBLIC;
