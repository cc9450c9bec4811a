-- Removes what scripts/bench_structures.sql built.
DROP FUNCTION IF EXISTS public.exp_hybrid(tsquery, bigint, bigint[], integer);
DROP FUNCTION IF EXISTS public.exp_part_newest(tsquery, bigint, bigint[], integer);
DROP TABLE IF EXISTS history.msd_part;
DROP TABLE IF EXISTS history.msd_terms;
DROP INDEX IF EXISTS history.msd_rum_idx, history.msd_rum_ord_idx, history.msd_conv_doc_idx;
DROP EXTENSION IF EXISTS rum;
DROP EXTENSION IF EXISTS btree_gin;
