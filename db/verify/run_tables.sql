-- Verify history-search:run_tables on pg
BEGIN;

SELECT run_key, tenant_key, run_token, agent_key, conversation_key, requester_key, current_message_key,
       loaded_message_keys, explicit_audience_keys, audience_keys, started_at, ended_at, evidence_count
  FROM history.runs WHERE false;
SELECT digest_key_id, secret FROM history.query_digest_keys WHERE false;
SELECT event_key, tenant_key, search_event_id, run_key, query_digest, digest_key_id, status FROM history.conversation_search_events WHERE false;
SELECT tenant_key, run_key, message_key, event_key, proof_keys FROM history.run_evidence WHERE false;
SELECT trace_key, tenant_key, run_key, entry_kind, event_key, detail FROM history.run_trace WHERE false;

ROLLBACK;
