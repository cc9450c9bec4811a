-- Revert history-search:core_tables from pg
BEGIN;

DROP TABLE history.write_locks, history.search_settings, history.message_search_documents, history.conversation_authors,
    history.identity_proofs, history.message_lineage, history.message_sources,
    history.messages, history.message_events, history.memberships,
    history.conversations, history.tenants, history.accounts CASCADE;
DROP FUNCTION history._time_buckets(timestamptz), history._conversation_weeks(bigint, timestamptz);

COMMIT;
