-- Revert history-search:record_reply from pg: back to its @v0.2.0 version
-- (if the signature changed, drop the new function here first).
-- Deploy history-search:record_reply to pg
-- The function lives in db/functions/record_reply.sql.
-- Reworked after v0.1.0: The delivery audience counts the members open now (a future join too) and those whose membership covers the reply's sent_at.
BEGIN;
SET LOCAL ROLE history_owner;

-- record_reply: the final delivery check, then the agent's reply posted into
-- the destination with the run's evidence as its lineage, and the run ended.
-- HS005 naming the failing evidence when anything no longer passes: nothing
-- is posted and the run stays open. A default audience counts the members
-- open now and those who were members when the reply was sent.
CREATE OR REPLACE FUNCTION history.record_reply(
    p_run        uuid,
    p_message_id text,
    p_body       text,
    p_sent_at    timestamptz
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
    v_run      history.runs := history._lock_open_run(p_run);
    v_problems text;
    v_sources  text[];
BEGIN
    -- The reply's body is checked before the delivery check (post_message checks it again).
    PERFORM history._require_body(p_body, p_message_id);
    PERFORM history._require_time('p_sent_at', p_sent_at);

    -- Hold every proof the evidence relied on: a concurrent revoke_proof
    -- waits for this transaction, or has committed and is seen below
    -- (40001 under REPEATABLE READ).
    PERFORM 1 FROM history.identity_proofs p
     WHERE p.proof_key IN (SELECT unnest(ev.proof_keys) FROM history.run_evidence ev WHERE ev.run_key = v_run.run_key)
       FOR SHARE;

    SELECT string_agg(pg_catalog.format('%s (%s)', d.message_id, d.reason), ', ' ORDER BY d.message_id)
      INTO v_problems
      FROM history._delivery_problems(v_run.run_key, v_run.agent_key, history._delivery_audience(v_run, p_sent_at)) d;
    IF v_problems IS NOT NULL THEN
        RAISE EXCEPTION 'delivery blocked: evidence no longer passes: %', v_problems
            USING ERRCODE = 'HS005',
                  HINT = 'Search again, or reply without that evidence in a new run.';
    END IF;

    SELECT coalesce(array_agg(m.message_id ORDER BY m.message_id), '{}') INTO v_sources
      FROM history.run_evidence ev JOIN history.messages m ON m.message_key = ev.message_key
     WHERE ev.run_key = v_run.run_key;
    PERFORM history.post_message(
        p_message_id,
        (SELECT c.conversation_id FROM history.conversations c WHERE c.conversation_key = v_run.conversation_key),
        (SELECT a.account_id FROM history.accounts a WHERE a.account_key = v_run.agent_key),
        p_body, p_sent_at, v_sources);

    UPDATE history.runs SET ended_at = pg_catalog.now() WHERE run_key = v_run.run_key;
    INSERT INTO history.run_trace (run_key, entry_kind, detail)
    VALUES (v_run.run_key, 'delivery', jsonb_build_object('reply_message_id', p_message_id, 'sources', cardinality(v_sources))),
           (v_run.run_key, 'end', jsonb_build_object('evidence', v_run.evidence_count));
END
$function$;

COMMENT ON FUNCTION history.record_reply(uuid, text, text, timestamptz) IS
    'Final delivery check, then post the agent''s reply with the evidence as lineage and end the run; HS005 if blocked';
REVOKE ALL ON FUNCTION history.record_reply(uuid, text, text, timestamptz) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION history.record_reply(uuid, text, text, timestamptz) TO history_runtime;

RESET ROLE;
COMMIT;
