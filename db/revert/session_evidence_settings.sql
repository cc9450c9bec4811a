-- Revert history-search:session_evidence_settings from pg
BEGIN;
SET LOCAL ROLE history_owner;

ALTER TYPE history._ranked_candidate DROP ATTRIBUTE session;
ALTER TABLE history.search_settings DROP COLUMN session_gap, DROP COLUMN session_weight;

RESET ROLE;
COMMIT;
