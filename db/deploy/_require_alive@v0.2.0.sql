-- Deploy history-search:_require_alive to pg
-- The function lives in db/functions/_require_alive.sql.
-- Reworked after v0.1.0: Writes to one message serialise: lock the message row, then read its current event.
BEGIN;
SET LOCAL ROLE history_owner;

-- _require_alive: lock a message and HS004 if its latest event is a deletion.
-- Every write to a message calls this first, so writes to one message
-- serialise: a writer that waited for the lock reads the state the earlier
-- writer committed (a delete it waited for is seen, HS004).
CREATE OR REPLACE FUNCTION history._require_alive(p_message_key bigint, p_message_id text)
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
     WHERE m.message_key = p_message_key
       FOR UPDATE;
    -- A new statement, a new snapshot: it sees the event the lock waited for.
    IF (SELECT e.event_kind FROM history.message_events e WHERE e.event_key = v_current) = 'deleted' THEN
        RAISE EXCEPTION 'message % is deleted', quote_literal(p_message_id)
            USING ERRCODE = 'HS004', HINT = 'A deleted message can be neither edited nor deleted again.';
    END IF;
END
$function$;

COMMENT ON FUNCTION history._require_alive(bigint, text) IS 'Internal: lock a message, HS004 if it is deleted';
REVOKE ALL ON FUNCTION history._require_alive(bigint, text) FROM PUBLIC;

RESET ROLE;
COMMIT;
