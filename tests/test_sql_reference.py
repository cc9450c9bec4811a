"""docs/sql-reference.md covers the whole public SQL surface of a migrated database:
every function and procedure of schema history not named `_…`, every view, every
public type, every role the migrations create, every HS error code the SQL raises,
and it links nowhere outside the repository."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = (ROOT / "docs" / "sql-reference.md").read_text(encoding="utf-8")


def test_every_public_routine_view_type_and_role_is_documented(conn):
    routines = [r[0] for r in conn.execute(
        """SELECT DISTINCT p.proname::text FROM pg_catalog.pg_proc p
            WHERE p.pronamespace = 'history'::regnamespace AND p.proname !~ '^_' ORDER BY 1""")]
    views = [r[0] for r in conn.execute(
        """SELECT c.relname::text FROM pg_catalog.pg_class c
            WHERE c.relnamespace = 'history'::regnamespace AND c.relkind IN ('v', 'm') ORDER BY 1""")]
    types = [r[0] for r in conn.execute(
        """SELECT t.typname::text FROM pg_catalog.pg_type t
             JOIN pg_catalog.pg_class c ON c.oid = t.typrelid AND c.relkind = 'c'
            WHERE t.typnamespace = 'history'::regnamespace AND t.typname !~ '^_' ORDER BY 1""")]
    roles = [r[0] for r in conn.execute(
        "SELECT rolname::text FROM pg_catalog.pg_roles WHERE rolname LIKE 'history\\_%' ORDER BY 1")]
    assert len(routines) >= 15 and views and types and len(roles) >= 4
    missing = [f"history.{n}" for n in routines + views + types if f"history.{n}" not in REFERENCE]
    missing += [r for r in roles if f"`{r}`" not in REFERENCE]
    assert missing == [], "not in docs/sql-reference.md"


def test_every_view_column_is_documented(conn):
    columns = conn.execute(
        """SELECT c.relname::text, a.attname::text FROM pg_catalog.pg_attribute a
             JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
            WHERE c.relnamespace = 'history'::regnamespace AND c.relkind = 'v'
              AND a.attnum > 0 AND NOT a.attisdropped ORDER BY 1, a.attnum""").fetchall()
    missing = {col for _v, col in columns if f"`{col}`" not in REFERENCE}
    assert missing == set()


def test_every_error_code_the_sql_raises_is_documented():
    raised = set()
    for path in (ROOT / "db").rglob("*.sql"):
        if "tests" not in path.parts:
            raised |= set(re.findall(r"ERRCODE\s*=\s*'(HS\d{3})'", path.read_text(encoding="utf-8")))
    assert {"HS001", "HS002", "HS003", "HS004", "HS005"} <= raised
    assert [c for c in sorted(raised) if f"`{c}`" not in REFERENCE] == []


def test_the_docs_link_nowhere_outside_the_repository():
    for doc in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]:
        text = doc.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            assert not target.startswith(("http://", "https://", "/")), (doc.name, target)
            path = (doc.parent / target.split("#", 1)[0]).resolve()
            assert path.is_relative_to(ROOT) and path.exists(), (doc.name, target)
        assert "../shared" not in text and "/work/" not in text, doc.name
