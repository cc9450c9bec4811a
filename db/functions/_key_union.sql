-- _key_union: the keys of two arrays as one array, sorted, each once (the
-- union of a message's proofs when a later search relies on it again).
-- A function, not a subquery, in the evidence insert's ON CONFLICT clause:
-- Citus refuses a subquery in an INSERT ... VALUES on a distributed table.
CREATE OR REPLACE FUNCTION history._key_union(p_keys bigint[], p_more bigint[])
RETURNS bigint[]
LANGUAGE sql
IMMUTABLE
PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN ARRAY(SELECT DISTINCT k FROM unnest(p_keys || p_more) k ORDER BY k);

COMMENT ON FUNCTION history._key_union(bigint[], bigint[]) IS
    'Internal: two arrays of keys as one, sorted, without repeats';
REVOKE ALL ON FUNCTION history._key_union(bigint[], bigint[]) FROM PUBLIC;
