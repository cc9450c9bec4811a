-- Revert history-search:_recompute_components from pg: back to its @v0.1.0 version
-- (if the signature changed, drop the new function here first).
\ir ../deploy/_recompute_components@v0.1.0.sql

-- Components as the earlier version walks them (through agent accounts too).
BEGIN;
SET LOCAL ROLE history_owner;
SELECT history._recompute_components(ARRAY(
    SELECT DISTINCT k
      FROM history.identity_proofs p
     CROSS JOIN LATERAL (VALUES (p.account_a_key), (p.account_b_key)) e(k)
     WHERE p.revoked_at IS NULL
       AND EXISTS (SELECT FROM history.accounts x
                    WHERE x.account_key IN (p.account_a_key, p.account_b_key) AND x.kind <> 'person')
     ORDER BY k));
RESET ROLE;
COMMIT;
