-- Deploy history-search:_recompute_components to pg
-- The function lives in db/functions/_recompute_components.sql.
-- Reworked after v0.1.0: Links join person accounts only: an agent account is always its own component.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_recompute_components.sql

-- A database of an earlier release may hold proofs naming an agent account
-- (link_identity accepted them): relabel the components they joined, so the
-- agent stands alone and the persons keep only their person links.
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
