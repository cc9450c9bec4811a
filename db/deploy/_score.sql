-- Deploy history-search:_score to pg
-- requires: _score@v0.1.0
-- requires: session_evidence_settings
-- requires: query_period
-- The function lives in db/functions/_score.sql. It gained two arguments (the
-- period the query names, the time words when it asks when) and three result
-- columns (session, period, tells_time): the earlier one goes first.
BEGIN;
SET LOCAL ROLE history_owner;

DROP FUNCTION history._score(bigint[], tsvector[], bigint[], bigint[], timestamptz[], text[], text[], bigint[],
                             bigint, bigint[], bigint[], history.search_settings, timestamptz);
\ir ../functions/_score.sql

RESET ROLE;
COMMIT;
