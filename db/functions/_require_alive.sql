-- _require_alive: lock a message and HS004 if its latest event is a deletion.
-- Every write to a message calls this first, so writes to one message
-- serialise: a writer that waited for the lock reads the state the earlier
-- writer committed (a delete it waited for is seen, HS004).
CREATE OR REPLACE FUNCTION history._require_alive(p_message_key bigint, p_message_id text, p_tenant_key integer)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, history, pg_temp
AS $function$
DECLARE
    v_current bigint;
BEGIN
    -- Lock the message row alone. After waiting, READ COMMITTED re-reads the
    -- locked row's newest version; a join in the same statement would re-check
    -- the event row of the old snapshot instead, drop the row and read NULL.
    SELECT m.current_event_key INTO v_current
      FROM history.messages m
     WHERE m.message_key = p_message_key AND m.tenant_key = p_tenant_key
       FOR UPDATE;
    -- A new statement, a new snapshot: it sees the event the lock waited for.
    IF (SELECT e.event_kind FROM history.message_events e
         WHERE e.event_key = v_current AND e.tenant_key = p_tenant_key) = 'deleted' THEN
        RAISE EXCEPTION 'message % is deleted', quote_literal(p_message_id)
            USING ERRCODE = 'HS004', HINT = 'A deleted message can be neither edited nor deleted again.';
    END IF;
END
$function$;

COMMENT ON FUNCTION history._require_alive(bigint, text, integer) IS 'Internal: lock a message, HS004 if it is deleted';
REVOKE ALL ON FUNCTION history._require_alive(bigint, text, integer) FROM PUBLIC;
