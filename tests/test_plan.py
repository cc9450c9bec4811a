"""Reading sqitch plans and scripts for yoyo (no database needed)."""

from __future__ import annotations

import textwrap

import pytest

from history_search.migrations import PlanError, load_script, read_plan, yoyo_url

WHO = "2026-01-01T00:00:00Z Dev <dev@example.invalid>"


def write_plan(tmp_path, body: str):
    path = tmp_path / "sqitch.plan"
    path.write_text("%syntax-version=1.0.0\n%project=demo\n\n" + textwrap.dedent(body))
    return read_plan(path)


def test_plan_lines_pragmas_comments_and_tags(tmp_path):
    plan = write_plan(tmp_path, f"""\
        # a comment
        a {WHO} # first
        b [a] {WHO} # needs a

        @v1 {WHO} # a tag is ignored
        c [demo:b a@v1 !zz] {WHO}
        d {WHO}
        """)
    assert plan.project == "demo"
    assert plan.names == ["a", "b", "c", "d"]
    assert [c.requires for c in plan.changes] == [(), ("a",), ("b", "a"), ()]
    assert plan.changes[2].conflicts == ("zz",)
    assert plan.changes[0].note == "first"
    assert plan.changes[0].planner == "Dev <dev@example.invalid>"
    assert plan.tags == {"v1": 2}


def test_reworked_change_gets_its_own_id_and_tagged_scripts(tmp_path):
    plan = write_plan(tmp_path, f"""\
        f {WHO}
        @v1 {WHO}
        g [f] {WHO}
        f [f@v1] {WHO} # reworked
        """)
    assert [(c.name, c.id, c.script) for c in plan.changes] == [
        ("f", "f", "f@v1"),
        ("g", "g", "g"),
        ("f", "f@rework1", "f"),
    ]
    assert plan.changes[2].requires == ("f",)


def test_a_reworked_instance_takes_the_script_of_the_tag_whose_file_exists(tmp_path):
    # sqitch rework names the copy after the newest tag; sqitch then finds it by
    # trying each tag between the instance and its rework, in plan order.
    # (the layout of this repository: the plan beside db/, sqitch.conf's top_dir)
    (tmp_path / "db" / "deploy").mkdir(parents=True)
    (tmp_path / "db" / "deploy" / "f@v2.sql").write_text("-- f as released\n")
    plan = write_plan(tmp_path, f"""\
        f {WHO}
        @v1 {WHO}
        g {WHO}
        @v2 {WHO}
        f [f@v2] {WHO} # reworked after v2
        h {WHO}
        @v3 {WHO}
        h [h@v3] {WHO} # no file yet: the first tag
        """)
    assert [c.script for c in plan.changes] == ["f@v2", "g", "f", "h@v3", "h"]


@pytest.mark.parametrize(
    "body, message",
    [
        (f"b [a] {WHO}\na {WHO}\n", "not planned before"),
        (f"a [other:x] {WHO}\n", "another project"),
        (f"a [a@nope] {WHO}\n", "unknown tag"),
        (f"a {WHO}\na {WHO}\n", "without a tag"),
        ("a 2026-01-01 Dev <d@e>\n", "cannot parse"),
        (f"@t {WHO}\n", "before any change"),
    ],
)
def test_bad_plans_are_rejected_with_the_line(tmp_path, body, message):
    with pytest.raises(PlanError, match=message) as err:
        write_plan(tmp_path, body)
    assert "sqitch.plan:" in str(err.value)


def test_transaction_lines_go_and_function_bodies_stay(tmp_path):
    script = tmp_path / "deploy.sql"
    script.write_text(textwrap.dedent("""\
        -- Deploy x
        BEGIN;
        CREATE FUNCTION f() RETURNS void LANGUAGE plpgsql AS $body$
        BEGIN
        COMMIT;
        END
        $body$;
        DO $$ BEGIN
        ROLLBACK;
        END $$;
        SELECT 'it''s $$ not a quote';
        commit ;
        """))
    out = load_script(script)
    kept = [line for line in out.splitlines() if not line.startswith("--")]
    assert kept.count("COMMIT;") == 1  # the one inside $body$
    assert kept.count("ROLLBACK;") == 1  # the one inside $$
    assert "BEGIN;" not in kept and "commit ;" not in kept
    assert len(out.splitlines()) == len(script.read_text().splitlines())  # line numbers kept


def test_ir_is_inlined_recursively_relative_to_the_including_file(tmp_path):
    (tmp_path / "deploy").mkdir()
    (tmp_path / "functions").mkdir()
    (tmp_path / "functions" / "f.sql").write_text("CREATE FUNCTION f() RETURNS int AS $$ SELECT 1 $$ LANGUAGE sql;\n\\ir g.sql\n")
    (tmp_path / "functions" / "g.sql").write_text("CREATE FUNCTION g() RETURNS int AS $$ SELECT 2 $$ LANGUAGE sql;\n")
    (tmp_path / "deploy" / "x.sql").write_text("BEGIN;\n\\ir ../functions/f.sql\nCOMMIT;\n")
    out = load_script(tmp_path / "deploy" / "x.sql")
    assert "FUNCTION f()" in out and "FUNCTION g()" in out
    assert out.index("FUNCTION f()") < out.index("FUNCTION g()")


def test_ir_cycles_and_missing_files_and_other_meta_commands_fail(tmp_path):
    (tmp_path / "a.sql").write_text("\\ir b.sql\n")
    (tmp_path / "b.sql").write_text("\\ir a.sql\n")
    with pytest.raises(PlanError, match="cycle"):
        load_script(tmp_path / "a.sql")
    (tmp_path / "c.sql").write_text("\\ir missing.sql\n")
    with pytest.raises(PlanError, match="missing.sql"):
        load_script(tmp_path / "c.sql")
    (tmp_path / "d.sql").write_text("\\set ON_ERROR_STOP 1\n")
    with pytest.raises(PlanError, match="meta-command"):
        load_script(tmp_path / "d.sql")


@pytest.mark.parametrize(
    "dsn, url",
    [
        ("postgresql://u:p@h:5/db", "postgresql+psycopg://u:p@h:5/db"),
        ("postgres://u@h/db?sslmode=disable", "postgresql+psycopg://u@h/db?sslmode=disable"),
        ("postgresql+psycopg://u@h/db", "postgresql+psycopg://u@h/db"),
        ("host=h port=5 dbname=db user=u password='p w'", "postgresql+psycopg://u:p%20w@h:5/db"),
        ("host=/tmp/s dbname=db", "postgresql+psycopg:///db?host=%2Ftmp%2Fs"),
    ],
)
def test_yoyo_url(dsn, url):
    assert yoyo_url(dsn) == url


def test_yoyo_url_rejects_other_schemes():
    with pytest.raises(ValueError):
        yoyo_url("mysql://u@h/db")
