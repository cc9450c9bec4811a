-- Revert history-search:run_tables from pg
BEGIN;

DROP TABLE history.run_trace, history.run_evidence, history.conversation_search_events,
    history.query_digest_keys, history.runs;

COMMIT;
