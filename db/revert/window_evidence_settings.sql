-- Revert history-search:window_evidence_settings from pg
BEGIN;
SET LOCAL ROLE history_owner;

ALTER TYPE history._ranking_pass DROP ATTRIBUTE neighbours;
ALTER TYPE history._ranked_candidate DROP ATTRIBUTE feedback, DROP ATTRIBUTE window_coverage;
ALTER TABLE history.search_settings DROP COLUMN feedback_weight, DROP COLUMN window_coverage_weight;

RESET ROLE;
COMMIT;
