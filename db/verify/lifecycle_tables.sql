-- Verify history-search:lifecycle_tables on pg
BEGIN;

SELECT erased_at FROM history.message_events WHERE false;
SELECT erasure_key, account_key, erased_at, recorded_at, requested_by, messages_erased, events_erased
  FROM history.account_erasures WHERE false;
SELECT 'history.messages_author_idx'::regclass, 'history.runs_ended_idx'::regclass, 'history.runs_open_idx'::regclass,
       'history.run_evidence_event_idx'::regclass, 'history.run_trace_event_idx'::regclass;

ROLLBACK;
