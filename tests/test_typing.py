"""The package's type information: ``mypy --strict`` is clean on it, and a user's
code sees the types (the package ships ``py.typed``, so mypy does not fall back
to ``Any`` for ``import history_search``)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import history_search

ROOT = Path(__file__).resolve().parent.parent


def mypy(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    # no cache: nothing is written into the checkout
    return subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", "--cache-dir", os.devnull, *args],
                          cwd=cwd, capture_output=True, text=True, timeout=600)


def test_mypy_strict_is_clean_on_the_package():
    proc = mypy("--strict", "pyclient/history_search")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Success: no issues found" in proc.stdout


def test_the_package_ships_py_typed_and_user_code_is_checked_against_it(tmp_path):
    assert (Path(history_search.__file__).parent / "py.typed").is_file()
    user = tmp_path / "agent.py"
    user.write_text(textwrap.dedent("""
        from history_search import Search, SearchResult, call_tool

        def turn(search: Search) -> int:
            result: SearchResult = search.search("launch", limit=3)
            reply = call_tool(search, {"query": "launch"})
            return result.budget_remaining + len(reply)

        bad: str = Search.search  # a wrong type that mypy must see
    """))
    proc = mypy("--strict", str(user), cwd=tmp_path)
    output = proc.stdout + proc.stderr
    assert "import-untyped" not in output and "import-not-found" not in output, output
    # exactly the one deliberate error: the package's types are known, not Any
    assert proc.returncode == 1 and output.count("error:") == 1, output
    assert 'agent.py:9: error: Incompatible types in assignment' in output, output


def test_every_public_name_is_importable_from_the_package():
    expected = {"Runtime", "Search", "Auditor", "AsyncRuntime", "AsyncSearch", "AsyncAuditor", "call_tool",
                "acall_tool", "tool_schema", "openai_tool", "anthropic_tool", "to_prompt",
                "HistorySearchError", "InvalidArgument", "UnknownRun", "NotFound", "Conflict",
                "DeliveryBlocked", "DatabaseError"}
    assert expected <= set(history_search.__all__)
    for name in history_search.__all__:
        assert getattr(history_search, name) is not None, name
    namespace: dict[str, object] = {}
    exec("from history_search import *", namespace)
    assert expected <= set(namespace)
    assert history_search.UnknownRun.code == "HS002"
