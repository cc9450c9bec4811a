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
