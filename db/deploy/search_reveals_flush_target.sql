-- Deploy history-search:search_reveals_flush_target to pg
-- requires: search_reveals
--
-- A reveal that finds the WAL not yet flushed past its search's commit (other
-- sessions inserted WAL in between, which nobody flushes soon) notes here the
-- position it needs flushed, and history.search_history's next, synchronous
-- commit flushes it: the reveal after that commit needs no wait
-- (docs/decisions.md, "Audit before reveal").
BEGIN;
SET LOCAL ROLE history_owner;

ALTER TABLE history.search_reveals ADD COLUMN flush_target pg_lsn;
COMMENT ON COLUMN history.search_reveals.flush_target IS
    'Set by a deferred reveal: a WAL position at or after the search''s commit; once flushed past it the hits may be revealed';

RESET ROLE;
COMMIT;
