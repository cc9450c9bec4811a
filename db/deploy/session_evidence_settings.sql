-- Deploy history-search:session_evidence_settings to pg
-- requires: core_tables
-- requires: types
-- The session signal of the ranking (history._score): its weight and the time
-- gap that bounds a message's session, and its place among a hit's components.
BEGIN;
SET LOCAL ROLE history_owner;

ALTER TABLE history.search_settings
    ADD COLUMN session_weight float8 NOT NULL DEFAULT 0.2 CHECK (session_weight >= 0),
    ADD COLUMN session_gap interval NOT NULL DEFAULT '30 minutes' CHECK (session_gap > interval '0');
COMMENT ON COLUMN history.search_settings.session_weight IS
    'Weight of the best text score among the other matches of a message''s session (history._score)';
COMMENT ON COLUMN history.search_settings.session_gap IS
    'Messages of one conversation at most this far apart in time are one session for the session signal';
ALTER TYPE history._ranked_candidate ADD ATTRIBUTE session float8;

RESET ROLE;
COMMIT;
