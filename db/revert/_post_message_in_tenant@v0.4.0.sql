-- Revert history-search:_post_message_in_tenant from pg
BEGIN;

DROP FUNCTION history._post_message_in_tenant(integer, text, text, text, text, timestamptz, text[]);

COMMIT;
