-- Revert history-search:_ineligible_by from pg
BEGIN;

DROP FUNCTION history._ineligible_by(bigint, timestamptz, boolean, tstzmultirange, tstzmultirange, bigint[], bigint[], tstzmultirange[], bigint[]);

COMMIT;
