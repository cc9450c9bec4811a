-- Deploy history-search:audit_views_by_tenant to pg
-- requires: audit_views tenant_accounts
--
-- The audit views name each search's tenant (tenant_id) and join every row
-- within it: ids are unique only within a tenant, so a returned message is
-- looked up in its search's tenant, not by its id alone.
BEGIN;
SET LOCAL ROLE history_owner;

DROP VIEW history.search_audit_messages;
DROP VIEW history.search_audit;

CREATE VIEW history.search_audit AS
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
  JOIN history.accounts requester ON requester.account_key = r.requester_key AND requester.tenant_key = e.tenant_key;
COMMENT ON VIEW history.search_audit IS 'Audit: one row per search_history call (no query or message text)';

CREATE VIEW history.search_audit_messages AS
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
                      WHERE x.item->>'message_id' = s.item->>'hit_message_id') h ON true;
COMMENT ON VIEW history.search_audit_messages IS
    'Audit: one row per message a search returned (hit or neighbour), with its hit''s ranking components';

REVOKE ALL ON history.search_audit, history.search_audit_messages FROM PUBLIC;
GRANT SELECT ON history.search_audit, history.search_audit_messages TO history_auditor;

RESET ROLE;
COMMIT;
