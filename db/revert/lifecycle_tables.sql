-- Revert history-search:lifecycle_tables from pg
-- Erased events cannot go back to the old check (their bodies are gone): a
-- database with erasures cannot be reverted past this change.
BEGIN;

DROP INDEX history.run_trace_event_idx;
DROP INDEX history.run_evidence_event_idx;
DROP INDEX history.runs_open_idx;
DROP INDEX history.runs_ended_idx;
DROP INDEX history.messages_author_idx;
DROP TABLE history.account_erasures;
ALTER TABLE history.message_events DROP CONSTRAINT message_events_body_check;
ALTER TABLE history.message_events ADD CONSTRAINT message_events_check CHECK ((event_kind = 'deleted') = (body IS NULL));
ALTER TABLE history.message_events DROP COLUMN erased_at;

COMMIT;
