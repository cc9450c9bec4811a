-- _search_audit_messages_rows: history.search_audit_messages' rows, computed as the view's owner.
-- The view reads its tables with its owner's rights, but on Citus the workers'
-- shards are read over connections opened as the session's role, which an
-- auditor's login cannot pass; run as the owner, this function's reads reach
-- the shards over the owner's connections. `history-search distribute`
-- redefines history.search_audit_messages on a Citus coordinator as SELECT * FROM this function;
-- on one node the view keeps its own query, so a filter on one of its columns
-- still reaches the tables' indexes. The query is the view's, column for column:
-- a change of one is a change of the other.
CREATE OR REPLACE FUNCTION history._search_audit_messages_rows()
RETURNS TABLE (
    search_event_id uuid,
    run_key bigint,
    run_token_sha256 text,
    tenant_id text,
    agent_id text,
    searched_at timestamp with time zone,
    "position" integer,
    message_id text,
    conversation_id text,
    sent_at timestamp with time zone,
    "role" text,
    hit_message_id text,
    hit_rank integer,
    text_score double precision,
    coverage double precision,
    actor double precision,
    "conversation" double precision,
    participation double precision,
    recency double precision,
    total double precision
)
LANGUAGE sql
STABLE
SECURITY DEFINER
SET search_path = pg_catalog, history, pg_temp
SET extra_float_digits = 1
SET DateStyle = 'ISO, MDY'
SET IntervalStyle = postgres
SET TimeZone = 'UTC'
SET standard_conforming_strings = on
AS $function$
SELECT e.search_event_id,
       r.run_key,
       pg_catalog.encode(pg_catalog.sha256(pg_catalog.convert_to(r.run_token::text, 'UTF8')), 'hex') AS run_token_sha256,
       t.tenant_id,
       agent.account_id     AS agent_id,
       e.searched_at,
       s.ordinality::integer AS position,
       s.item->>'message_id' AS message_id,
       c.conversation_id,
       m.sent_at,
       s.item->>'role'       AS role,
       s.item->>'hit_message_id' AS hit_message_id,
       (h.item->>'rank')::integer        AS hit_rank,
       (h.item->>'text')::float8          AS text_score,
       (h.item->>'coverage')::float8      AS coverage,
       (h.item->>'actor')::float8         AS actor,
       (h.item->>'conversation')::float8  AS conversation,
       (h.item->>'participation')::float8 AS participation,
       (h.item->>'recency')::float8       AS recency,
       (h.item->>'total')::float8         AS total
  FROM history.conversation_search_events e
  JOIN history.tenants t ON t.tenant_key = e.tenant_key
  JOIN history.runs r ON r.run_key = e.run_key AND r.tenant_key = e.tenant_key
  JOIN history.accounts agent ON agent.account_key = e.agent_key AND agent.tenant_key = e.tenant_key
  CROSS JOIN LATERAL pg_catalog.jsonb_array_elements(e.selections) WITH ORDINALITY AS s(item, ordinality)
  JOIN history.messages m ON m.message_id = s.item->>'message_id' AND m.tenant_key = e.tenant_key
  JOIN history.conversations c ON c.conversation_key = m.conversation_key AND c.tenant_key = e.tenant_key
  LEFT JOIN LATERAL (SELECT x.item FROM pg_catalog.jsonb_array_elements(e.hit_rankings) AS x(item)
                      WHERE x.item->>'message_id' = s.item->>'hit_message_id') h ON true
$function$;

COMMENT ON FUNCTION history._search_audit_messages_rows() IS 'history-search: the rows of history.search_audit_messages as its owner reads them (what the view reads on Citus)';
GRANT EXECUTE ON FUNCTION history._search_audit_messages_rows() TO history_auditor;
