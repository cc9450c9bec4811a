-- history-search:window_evidence_settings on a database Citus already
-- distributes: db/deploy/window_evidence_settings.sql (released in 0.5.0) in
-- statements Citus accepts. Citus refuses a column added with an unnamed
-- CHECK ("all constraints in Citus must have explicit names"), so each CHECK
-- is added after its column, under the name PostgreSQL gives it there; and
-- it sends an ADD CONSTRAINT to the workers as the whole text of the query
-- that held it, which the workers refuse when that text holds several
-- statements (as a migration's does), so each runs alone, through EXECUTE.
-- The schema is the same (tests/test_citus.py).
BEGIN;
SET LOCAL ROLE history_owner;

ALTER TABLE history.search_settings ADD COLUMN window_coverage_weight float8 NOT NULL DEFAULT 0.5;
ALTER TABLE history.search_settings ADD COLUMN feedback_weight float8 NOT NULL DEFAULT 0.2;
DO $$
BEGIN
    EXECUTE 'ALTER TABLE history.search_settings ADD CONSTRAINT search_settings_window_coverage_weight_check'
            ' CHECK (window_coverage_weight >= 0)';
    EXECUTE 'ALTER TABLE history.search_settings ADD CONSTRAINT search_settings_feedback_weight_check'
            ' CHECK (feedback_weight >= 0)';
END
$$;
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
