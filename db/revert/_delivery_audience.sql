-- Revert history-search:_delivery_audience from pg: back to its @v0.2.0 version.
-- That version's deploy begins by dropping 0.1.0's one-argument function,
-- which is long gone here: give it one to drop, then run it as released. Its
-- body calls _default_audience as 0.2.0 had it, which is reverted after this
-- change (it comes earlier in the plan): its body is checked when it runs.
BEGIN;
SET LOCAL ROLE history_owner;
CREATE FUNCTION history._delivery_audience(history.runs) RETURNS bigint[] LANGUAGE sql AS 'SELECT NULL::bigint[]';
RESET ROLE;
COMMIT;

SET check_function_bodies = off;
\ir ../deploy/_delivery_audience@v0.2.0.sql
RESET check_function_bodies;
