-- Revert history-search:_require_alive from pg: back to its @v0.1.0 version
-- (if the signature changed, drop the new function here first).
-- Deploy history-search:_require_alive to pg
-- The function lives in db/functions/_require_alive.sql.
BEGIN;
SET LOCAL ROLE history_owner;

-- _require_alive: lock a message and HS004 if its latest event is a deletion.
CREATE OR REPLACE FUNCTION history._require_alive(p_message_key bigint, p_message_id text)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, history, pg_temp
AS $function$
BEGIN
    IF (SELECT e.event_kind
          FROM history.messages m JOIN history.message_events e ON e.event_key = m.current_event_key
         WHERE m.message_key = p_message_key
           FOR UPDATE OF m) = 'deleted' THEN
        RAISE EXCEPTION 'message % is deleted', quote_literal(p_message_id)
            USING ERRCODE = 'HS004', HINT = 'A deleted message can be neither edited nor deleted again.';
    END IF;
END
$function$;

COMMENT ON FUNCTION history._require_alive(bigint, text) IS 'Internal: lock a message, HS004 if it is deleted';
REVOKE ALL ON FUNCTION history._require_alive(bigint, text) FROM PUBLIC;

RESET ROLE;
COMMIT;
