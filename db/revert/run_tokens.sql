-- Revert history-search:run_tokens from pg
BEGIN;

DROP TABLE history.run_tokens;

COMMIT;
