-- _admit_hits: the search's admission stage, a pure function. Walks the
-- ranked hits (p_hits, message keys in rank order, p_neighbours parallel to
-- them) and admits each, then its neighbours in the order before1, after1,
-- before2, after2, while p_remaining (the run's budget left) lasts. A
-- message the run already holds (p_prior) or this search already showed
-- costs nothing; one not in p_alive (deleted since it was found) is left
-- out: a hit counted as dead, a neighbour silently.
CREATE OR REPLACE FUNCTION history._admit_hits(
    p_hits bigint[], p_neighbours history._hit_neighbours[], p_alive bigint[], p_prior bigint[],
    p_remaining integer)
RETURNS history._admission
LANGUAGE plpgsql
IMMUTABLE
SET search_path = pg_catalog, history, pg_temp
AS $function$
DECLARE
    v_result history._admission;
    v_hit    history._admitted_hit;
    v_nb     bigint;
    i        integer;
BEGIN
    v_result.hits := '{}';
    v_result.selected := '{}';
    v_result.new_keys := '{}';
    v_result.remaining := p_remaining;
    v_result.withheld := false;
    v_result.budget_out := 0;
    v_result.dead := 0;
    FOR i IN 1 .. coalesce(cardinality(p_hits), 0) LOOP
        IF p_hits[i] <> ALL (p_alive) THEN
            v_result.dead := v_result.dead + 1;
            CONTINUE;
        END IF;
        IF p_hits[i] <> ALL (p_prior || v_result.selected) THEN
            IF v_result.remaining = 0 THEN
                v_result.withheld := true;
                v_result.budget_out := v_result.budget_out + 1;
                CONTINUE;
            END IF;
            v_result.remaining := v_result.remaining - 1;
            v_result.new_keys := v_result.new_keys || p_hits[i];
        END IF;
        IF p_hits[i] <> ALL (v_result.selected) THEN
            v_result.selected := v_result.selected || p_hits[i];
        END IF;
        v_hit.rank := i;
        v_hit.message_key := p_hits[i];
        v_hit.before := '{}';
        v_hit.after := '{}';
        FOREACH v_nb IN ARRAY ARRAY[p_neighbours[i].before[1], p_neighbours[i].after[1],
                                    p_neighbours[i].before[2], p_neighbours[i].after[2]] LOOP
            CONTINUE WHEN v_nb IS NULL OR v_nb <> ALL (p_alive);
            IF v_nb <> ALL (p_prior || v_result.selected) THEN
                IF v_result.remaining = 0 THEN
                    v_result.withheld := true;
                    CONTINUE;
                END IF;
                v_result.remaining := v_result.remaining - 1;
                v_result.new_keys := v_result.new_keys || v_nb;
            END IF;
            IF v_nb <> ALL (v_result.selected) THEN
                v_result.selected := v_result.selected || v_nb;
            END IF;
            IF v_nb = ANY (p_neighbours[i].before) THEN
                v_hit.before := v_hit.before || v_nb;
            ELSE
                v_hit.after := v_hit.after || v_nb;
            END IF;
        END LOOP;
        v_result.hits := v_result.hits || v_hit;
    END LOOP;
    RETURN v_result;
END
$function$;

COMMENT ON FUNCTION history._admit_hits(bigint[], history._hit_neighbours[], bigint[], bigint[], integer) IS
    'Internal: the search''s admission stage: hits and neighbours admitted in rank order while the budget lasts';
REVOKE ALL ON FUNCTION history._admit_hits(bigint[], history._hit_neighbours[], bigint[], bigint[], integer) FROM PUBLIC;
