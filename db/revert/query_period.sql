-- Revert history-search:query_period from pg
BEGIN;
SET LOCAL ROLE history_owner;

DROP FUNCTION history._query_asks_when(text, regconfig[]);
DROP FUNCTION history._query_period(text, timestamptz);
DROP FUNCTION history._query_period_day(integer, integer, integer);
ALTER TYPE history._ranked_candidate DROP ATTRIBUTE tells_time, DROP ATTRIBUTE period;
ALTER TABLE history.search_settings DROP COLUMN tells_time_weight, DROP COLUMN period_half_life,
                                     DROP COLUMN period_weight;

RESET ROLE;
COMMIT;
