-- Deploy history-search:window_evidence_settings to pg
-- requires: core_tables
-- requires: types
-- requires: search_stage_types
-- The window stage of the ranking (history._window_scores): the weights of a
-- match's window coverage and of feedback from the best windows, their place
-- among a hit's components, and the neighbours the stage walked (the ranking
-- pass hands them on, so the hits' neighbours are not walked twice).
BEGIN;
SET LOCAL ROLE history_owner;

ALTER TABLE history.search_settings
    ADD COLUMN window_coverage_weight float8 NOT NULL DEFAULT 0.5 CHECK (window_coverage_weight >= 0),
    ADD COLUMN feedback_weight float8 NOT NULL DEFAULT 0.2 CHECK (feedback_weight >= 0);
COMMENT ON COLUMN history.search_settings.window_coverage_weight IS
    'Weight of the share of the query''s rarity a match and its two eligible messages each side contain (history._window_scores)';
COMMENT ON COLUMN history.search_settings.feedback_weight IS
    'Weight of the terms that recur in the windows of the two best matches (history._window_scores)';
ALTER TYPE history._ranked_candidate ADD ATTRIBUTE window_coverage float8, ADD ATTRIBUTE feedback float8;
-- parallel to ranked: a match's neighbours as history._hit_neighbours walked
-- them, NULL for one the stage did not walk (or every one, without the stage)
ALTER TYPE history._ranking_pass ADD ATTRIBUTE neighbours history._hit_neighbours[];

RESET ROLE;
COMMIT;
