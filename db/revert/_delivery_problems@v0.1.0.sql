-- Revert history-search:_delivery_problems from pg
BEGIN;

DROP FUNCTION history._delivery_problems(bigint, bigint, bigint[]);

COMMIT;
