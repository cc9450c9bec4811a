-- Deploy history-search:record_reply to pg
-- The function lives in db/functions/record_reply.sql.
-- Reworked after v0.1.0: The delivery audience counts the members open now (a future join too) and those whose membership covers the reply's sent_at.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/record_reply.sql

RESET ROLE;
COMMIT;
