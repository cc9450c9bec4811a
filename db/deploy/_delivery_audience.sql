-- Deploy history-search:_delivery_audience to pg
-- The function lives in db/functions/_delivery_audience.sql.
-- Reworked after v0.1.0: The delivery audience counts the members open now (a future join too) and those whose membership covers the reply's sent_at.
BEGIN;
SET LOCAL ROLE history_owner;

-- The audience now depends on the reply's time: the one-argument version goes.
DROP FUNCTION history._delivery_audience(history.runs);

\ir ../functions/_delivery_audience.sql

RESET ROLE;
COMMIT;
