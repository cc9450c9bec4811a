-- _query_period: the time a query names, as a range of UTC days, or NULL.
-- Questions about the past often say when ("in May 2023", "on 8 May, 2023",
-- "May 8, 2023", "in 2022", "last month", "yesterday"): that steers the
-- period signal of history._score (messages sent in or near it) instead of
-- being matched as words. The first form found wins, most specific first; a
-- month without a year ("in May") is the latest one that began before p_now;
-- relative forms count from p_now. English forms only. Written without
-- backslashes, so that no caller's standard_conforming_strings changes it.
-- A day of a month, kept inside it: "31 February" is its last day, "0 May" its first.
CREATE OR REPLACE FUNCTION history._query_period_day(p_year integer, p_month integer, p_day integer)
RETURNS date
LANGUAGE sql
IMMUTABLE
SET search_path = pg_catalog, history, pg_temp
AS $function$
    SELECT make_date(p_year, p_month, 1)
           + (least(greatest(p_day, 1), extract(day FROM make_date(p_year, p_month, 1) + interval '1 month' - interval '1 day')::integer) - 1)
$function$;
COMMENT ON FUNCTION history._query_period_day(integer, integer, integer) IS 'Internal: a day of a month named in a query, kept inside the month';
REVOKE ALL ON FUNCTION history._query_period_day(integer, integer, integer) FROM PUBLIC;

CREATE OR REPLACE FUNCTION history._query_period(p_query text, p_now timestamptz)
RETURNS tstzrange
LANGUAGE plpgsql
IMMUTABLE
SET search_path = pg_catalog, history, pg_temp
AS $function$
DECLARE
    c_months CONSTANT text := 'january|february|march|april|may|june|july|august|september|october|november|december';
    v_q      text := lower(left(p_query, 4000));
    v_today  date := (p_now AT TIME ZONE 'UTC')::date;
    v_m      text[];
    v_day    date;
    v_month  integer;
BEGIN
    -- 8 May 2023, 8th May, 2023
    v_m := regexp_match(v_q, '([0-9]{1,2})(st|nd|rd|th)? (' || c_months || '),? ?((19|20)[0-9]{2})');
    IF v_m IS NOT NULL THEN
        v_day := history._query_period_day(v_m[4]::integer, array_position(string_to_array(c_months, '|'), v_m[3]),
                                           v_m[1]::integer);
        RETURN tstzrange(v_day::timestamp AT TIME ZONE 'UTC', (v_day + 1)::timestamp AT TIME ZONE 'UTC');
    END IF;
    -- May 8, 2023
    v_m := regexp_match(v_q, '(' || c_months || ') ([0-9]{1,2})(st|nd|rd|th)?,? ?((19|20)[0-9]{2})');
    IF v_m IS NOT NULL THEN
        v_day := history._query_period_day(v_m[4]::integer, array_position(string_to_array(c_months, '|'), v_m[1]),
                                           v_m[2]::integer);
        RETURN tstzrange(v_day::timestamp AT TIME ZONE 'UTC', (v_day + 1)::timestamp AT TIME ZONE 'UTC');
    END IF;
    -- May 2023
    v_m := regexp_match(v_q, '(' || c_months || '),? ?((19|20)[0-9]{2})');
    IF v_m IS NOT NULL THEN
        v_day := make_date(v_m[2]::integer, array_position(string_to_array(c_months, '|'), v_m[1]), 1);
        RETURN tstzrange(v_day::timestamp AT TIME ZONE 'UTC', (v_day + interval '1 month') AT TIME ZONE 'UTC');
    END IF;
    -- in May (the latest May that began before now)
    v_m := regexp_match(v_q, 'in (' || c_months || ')([^a-z0-9]|$)');
    IF v_m IS NOT NULL THEN
        v_month := array_position(string_to_array(c_months, '|'), v_m[1]);
        v_day := make_date(extract(year FROM v_today)::integer, v_month, 1);
        IF v_day > v_today THEN
            v_day := v_day - interval '1 year';
        END IF;
        RETURN tstzrange(v_day::timestamp AT TIME ZONE 'UTC', (v_day + interval '1 month') AT TIME ZONE 'UTC');
    END IF;
    -- in 2023
    v_m := regexp_match(v_q, '(^|[^0-9])((19|20)[0-9]{2})([^0-9]|$)');
    IF v_m IS NOT NULL THEN
        v_day := make_date(v_m[2]::integer, 1, 1);
        RETURN tstzrange(v_day::timestamp AT TIME ZONE 'UTC', (v_day + interval '1 year') AT TIME ZONE 'UTC');
    END IF;
    -- yesterday, today, last/this week, month, year
    v_m := regexp_match(v_q, '(^|[^a-z])(yesterday|today|(last|this) (week|month|year))([^a-z]|$)');
    IF v_m IS NOT NULL THEN
        IF v_m[2] = 'yesterday' THEN
            v_day := v_today - 1;
            RETURN tstzrange(v_day::timestamp AT TIME ZONE 'UTC', v_today::timestamp AT TIME ZONE 'UTC');
        ELSIF v_m[2] = 'today' THEN
            RETURN tstzrange(v_today::timestamp AT TIME ZONE 'UTC', (v_today + 1)::timestamp AT TIME ZONE 'UTC');
        END IF;
        v_day := date_trunc(v_m[4], v_today::timestamp)::date;
        IF v_m[3] = 'last' THEN
            RETURN tstzrange((v_day - ('1 ' || v_m[4])::interval) AT TIME ZONE 'UTC', v_day::timestamp AT TIME ZONE 'UTC');
        END IF;
        RETURN tstzrange(v_day::timestamp AT TIME ZONE 'UTC', (v_today + 1)::timestamp AT TIME ZONE 'UTC');
    END IF;
    RETURN NULL;
END
$function$;

COMMENT ON FUNCTION history._query_period(text, timestamptz) IS
    'Internal: the period (UTC days) a query names, e.g. "in May 2023", "last month"; NULL when it names none';
REVOKE ALL ON FUNCTION history._query_period(text, timestamptz) FROM PUBLIC;
