-- Revert history-search:_record_search from pg
BEGIN;

DROP FUNCTION history._record_search(history.runs, text, text, timestamptz, timestamptz, integer, integer, history._counting_pass, history._ranking_pass, history._ranked_candidate[], history._admission, boolean, bigint[]);

COMMIT;
