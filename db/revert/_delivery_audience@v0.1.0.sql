-- Revert history-search:_delivery_audience from pg
BEGIN;

DROP FUNCTION history._delivery_audience(history.runs);

COMMIT;
