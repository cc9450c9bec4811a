-- Revert history-search:_delivery_problems from pg: back to its @v0.3.0 version.
-- That version's deploy begins by dropping 0.2.0's three-argument function,
-- which is long gone here: give it one to drop, then run it as released.
BEGIN;
SET LOCAL ROLE history_owner;
CREATE FUNCTION history._delivery_problems(bigint, bigint, bigint[]) RETURNS void LANGUAGE sql AS 'SELECT NULL::void';
RESET ROLE;
COMMIT;

\ir ../deploy/_delivery_problems@v0.3.0.sql
