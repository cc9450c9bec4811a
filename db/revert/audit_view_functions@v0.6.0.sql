-- Revert history-search:audit_view_functions from pg
-- On a Citus coordinator where distribute redefined the views over these
-- functions, the DROP refuses (the views depend on them) and nothing changes.
BEGIN;
SET LOCAL ROLE history_owner;

DROP FUNCTION history._status_rows();
DROP FUNCTION history._search_audit_messages_rows();
DROP FUNCTION history._search_audit_rows();

RESET ROLE;
COMMIT;
