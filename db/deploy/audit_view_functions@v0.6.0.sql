-- Deploy history-search:audit_view_functions to pg
-- requires: audit_views_by_tenant status_view
--
-- The rows of the auditor's three views, each from a SECURITY DEFINER function
-- executable by history_auditor: on Citus the views read through them (the
-- owner's connections reach the workers' shards, an auditor's login cannot);
-- `history-search distribute` puts those definitions in place there. On one
-- node the views keep their own queries. The functions live in db/functions/.
BEGIN;
SET LOCAL ROLE history_owner;

-- _search_audit_rows: history.search_audit's rows, computed as the view's owner.
-- The view reads its tables with its owner's rights, but on Citus the workers'
-- shards are read over connections opened as the session's role, which an
-- auditor's login cannot pass; run as the owner, this function's reads reach
-- the shards over the owner's connections. `history-search distribute`
-- redefines history.search_audit on a Citus coordinator as SELECT * FROM this function;
-- on one node the view keeps its own query, so a filter on one of its columns
-- still reaches the tables' indexes. The query is the view's, column for column:
-- a change of one is a change of the other.
CREATE OR REPLACE FUNCTION history._search_audit_rows()
RETURNS TABLE (
    search_event_id uuid,
    run_key bigint,
    run_token_sha256 text,
    tenant_id text,
    agent_id text,
    destination_conversation_id text,
    requester_id text,
    searched_at timestamp with time zone,
    query_digest text,
    digest_key_id integer,
    query_term_count integer,
    speaker text,
    sent_after timestamp with time zone,
    sent_before timestamp with time zone,
    effective_limit integer,
    hit_count integer,
    selected_count integer,
    hit_message_ids text[],
    selected_message_ids text[],
    excluded_speaker integer,
    excluded_time integer,
    excluded_perspective integer,
    excluded_audience integer,
    excluded_lineage integer,
    excluded_alive integer,
    excluded_in_context integer,
    excluded_budget integer,
    candidates_capped boolean,
    "status" text,
    budget_used integer,
    budget_remaining integer
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
       agent.account_id                  AS agent_id,
       dest.conversation_id              AS destination_conversation_id,
       requester.account_id              AS requester_id,
       e.searched_at,
       pg_catalog.encode(e.query_digest, 'hex') AS query_digest,
       e.digest_key_id,
       e.query_term_count,
       e.speaker,
       e.sent_after,
       e.sent_before,
       e.effective_limit,
       pg_catalog.cardinality(e.hit_message_ids)      AS hit_count,
       pg_catalog.cardinality(e.selected_message_ids) AS selected_count,
       e.hit_message_ids,
       e.selected_message_ids,
       e.excluded_speaker,
       e.excluded_time,
       e.excluded_perspective,
       e.excluded_audience,
       e.excluded_lineage,
       e.excluded_alive,
       e.excluded_in_context,
       e.excluded_budget,
       e.candidates_capped,
       e.status,
       e.budget_used,
       e.budget_remaining
  FROM history.conversation_search_events e
  JOIN history.tenants t ON t.tenant_key = e.tenant_key
  JOIN history.runs r ON r.run_key = e.run_key AND r.tenant_key = e.tenant_key
  JOIN history.accounts agent ON agent.account_key = e.agent_key AND agent.tenant_key = e.tenant_key
  JOIN history.conversations dest ON dest.conversation_key = r.conversation_key AND dest.tenant_key = e.tenant_key
  JOIN history.accounts requester ON requester.account_key = r.requester_key AND requester.tenant_key = e.tenant_key
$function$;

COMMENT ON FUNCTION history._search_audit_rows() IS 'history-search: the rows of history.search_audit as its owner reads them (what the view reads on Citus)';
GRANT EXECUTE ON FUNCTION history._search_audit_rows() TO history_auditor;
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
-- _status_rows: history.status' row, computed as the view's owner.
-- The view reads its tables with its owner's rights, but on Citus the workers'
-- shards are read over connections opened as the session's role, which an
-- auditor's login cannot pass; run as the owner, this function's reads reach
-- the shards over the owner's connections. `history-search distribute`
-- redefines history.status on a Citus coordinator as SELECT * FROM this function;
-- on one node the view keeps its own query, so a filter on one of its columns
-- still reaches the tables' indexes. The query is the view's, column for column
-- (but an OFFSET): a change of one is a change of the other.
CREATE OR REPLACE FUNCTION history._status_rows()
RETURNS TABLE (
    release text,
    observed_at timestamp with time zone,
    open_runs bigint,
    oldest_open_run_started_at timestamp with time zone,
    oldest_open_run_age interval,
    searches_last_day bigint,
    budget_exhausted_last_day bigint,
    searches_by_hour jsonb,
    oldest_search_at timestamp with time zone,
    reindex_running boolean,
    reindex_started_at timestamp with time zone,
    reindex_finished_at timestamp with time zone,
    reindex_rows_done bigint,
    reindex_last_message_key bigint,
    search_documents_estimate bigint,
    reindex_percent numeric
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
SELECT history.schema_release() AS release,
       pg_catalog.now() AS observed_at,
       o.open_runs,
       o.oldest_open_run_started_at,
       pg_catalog.now() OPERATOR(pg_catalog.-) o.oldest_open_run_started_at AS oldest_open_run_age,
       d.searches_last_day,
       d.budget_exhausted_last_day,
       h.searches_by_hour,
       (SELECT pg_catalog.min(e.searched_at) FROM history.conversation_search_events e) AS oldest_search_at,
       (p.started_at IS NOT NULL AND p.finished_at IS NULL) AS reindex_running,
       p.started_at  AS reindex_started_at,
       p.finished_at AS reindex_finished_at,
       p.rows_done   AS reindex_rows_done,
       p.last_message_key AS reindex_last_message_key,
       -- The planner's estimate (pg_class.reltuples): counting tens of millions
       -- of rows for a status line would take seconds.
       t.documents_estimate AS search_documents_estimate,
       CASE WHEN p.started_at IS NULL THEN NULL
            WHEN p.finished_at IS NOT NULL THEN 100.0
            ELSE pg_catalog.round(LEAST(100.0, 100.0 * p.rows_done / GREATEST(t.documents_estimate, 1)), 1)
       END AS reindex_percent
  FROM (SELECT pg_catalog.count(*) AS open_runs, pg_catalog.min(r.started_at) AS oldest_open_run_started_at
          FROM history.runs r WHERE r.ended_at IS NULL) o
 CROSS JOIN (SELECT pg_catalog.count(*) AS searches_last_day,
                    pg_catalog.count(*) FILTER (WHERE e.status = 'search_budget_exhausted') AS budget_exhausted_last_day
               FROM history.conversation_search_events e
              WHERE e.searched_at >= pg_catalog.now() OPERATOR(pg_catalog.-) interval '24 hours') d
 CROSS JOIN (SELECT pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
                        'hour', pg_catalog.to_char(x.hour AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), 'searches', x.searches, 'budget_exhausted', x.exhausted) ORDER BY x.hour) AS searches_by_hour
               FROM (SELECT g.hour,
                            pg_catalog.count(e.event_key) AS searches,
                            pg_catalog.count(e.event_key) FILTER (WHERE e.status = 'search_budget_exhausted') AS exhausted
                       FROM pg_catalog.generate_series(pg_catalog.date_trunc('hour', pg_catalog.now()) OPERATOR(pg_catalog.-) interval '23 hours',
                                                       pg_catalog.date_trunc('hour', pg_catalog.now()), interval '1 hour') g(hour)
                       LEFT JOIN history.conversation_search_events e
                              ON e.searched_at >= g.hour AND e.searched_at < g.hour OPERATOR(pg_catalog.+) interval '1 hour'
                      GROUP BY g.hour) x) h
 CROSS JOIN (SELECT GREATEST(c.reltuples, 0)::bigint AS documents_estimate
               FROM pg_catalog.pg_class c WHERE c.oid = 'history.message_search_documents'::regclass) t
  -- OFFSET 0: on Citus the reference table is read on its own, not joined on
  -- the coordinator over a connection to itself as the owner (who may not log in there).
  LEFT JOIN (SELECT * FROM history.reindex_progress OFFSET 0) p ON true
$function$;

COMMENT ON FUNCTION history._status_rows() IS 'history-search: the rows of history.status as its owner reads them (what the view reads on Citus)';
GRANT EXECUTE ON FUNCTION history._status_rows() TO history_auditor;

RESET ROLE;
COMMIT;
