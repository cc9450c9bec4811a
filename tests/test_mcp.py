"""``history-search mcp`` spoken to by the MCP SDK's own client over stdio.

The server is a subprocess (``python -m history_search mcp``) on this test's
database (fixtures ``db_dsn`` and ``connect_as`` from tests/harness.py), logged
in as ``history_searcher`` (``options=-c role=…``): the role the docs tell a
host to give it.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import uuid
from datetime import datetime, timedelta, timezone
from typing import Any
from urllib.parse import quote

import pytest

from history_search import Auditor, Runtime, Search, call_tool, tool_schema

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc)


def as_role(dsn: str, role: str) -> str:
    return dsn + ("&" if "?" in dsn else "?") + "options=" + quote(f"-c role={role}")


def build_world(rt: Runtime) -> None:
    rt.upsert_account("agent", "agent")
    for person in ("alice", "bob"):
        rt.upsert_account(person, "person")
    rt.upsert_conversation("team", "group")
    rt.upsert_conversation("dm-bob", "direct")
    for account in ("agent", "alice", "bob"):
        rt.add_member("team", account, T0 - timedelta(days=1))
    for account in ("agent", "bob"):
        rt.add_member("dm-bob", account, T0 - timedelta(days=1))
    for i in range(5):
        rt.post_message(f"t{i}", "team", "alice" if i % 2 == 0 else "bob", f"launch note number {i}",
                        T0 + timedelta(minutes=i))
    rt.post_message("secret", "dm-bob", "bob", "private launch worry", T0 + timedelta(minutes=6))
    rt.post_message("q", "team", "alice", "what about the launch?", T0 + timedelta(minutes=10))


@pytest.fixture
def runtime(connect_as) -> Runtime:
    rt = Runtime(connect_as("history_runtime"))
    build_world(rt)
    return rt


def server_params(*, dsn: str | None = None, run: uuid.UUID | None = None,
                  env: dict[str, str] | None = None) -> Any:
    from mcp import StdioServerParameters

    args = ["-m", "history_search", "mcp"]
    if dsn is not None:
        args += ["--dsn", dsn]
    if run is not None:
        args += ["--run", str(run)]
    # only what the server needs: not the test process's HISTORY_SEARCH_* variables
    base = {k: v for k, v in os.environ.items() if not k.startswith("HISTORY_SEARCH_")}
    return StdioServerParameters(command=sys.executable, args=args, env={**base, **(env or {})})


async def session(params: Any, body: Any) -> Any:
    from mcp import Client

    async with Client(params, read_timeout_seconds=120) as client:
        return await body(client)


def payload(result: Any) -> dict[str, Any]:
    assert len(result.content) == 1 and result.content[0].type == "text"
    data = json.loads(result.content[0].text)
    assert result.structured_content == data
    return data


def test_list_call_audit_and_errors_over_stdio(db_dsn, connect_as, runtime):
    run = runtime.begin_run("agent", "team", "alice", "q")

    async def body(client: Any) -> dict[str, Any]:
        listed = await client.list_tools()
        good = await client.call_tool("search_history", {"query": "launch", "limit": 2})
        strict_nulls = await client.call_tool("search_history", {"query": "launch note", "speaker": None,
                                                                 "after": None, "before": None, "limit": 1})
        bad = await client.call_tool("search_history", {"limit": "x", "run": str(uuid.uuid4())})
        inverted = await client.call_tool("search_history", {"query": "launch", "after": "2026-03-02T00:00:00Z",
                                                             "before": "2026-03-01T00:00:00Z"})
        unknown = await client.call_tool("delete_everything", {})
        after_errors = await client.call_tool("search_history", {"query": "number 4"})
        return {"listed": listed, "good": good, "strict_nulls": strict_nulls, "bad": bad, "inverted": inverted,
                "unknown": unknown, "after_errors": after_errors,
                "server": client.server_info}

    r = asyncio.run(session(server_params(dsn=as_role(db_dsn, "history_searcher"), run=run), body))

    assert r["server"].name == "history-search"
    [tool] = r["listed"].tools
    assert tool.name == "search_history" and tool.input_schema == tool_schema() and tool.description

    # hits, as the same JSON call_tool returns
    assert not r["good"].is_error
    good = payload(r["good"])
    assert good["status"] == "ok" and len(good["hits"]) == 2
    assert {h["message_id"] for h in good["hits"]} <= {f"t{i}" for i in range(5)}  # never bob's DM
    twin = runtime.begin_run("agent", "team", "alice", "q")
    direct = call_tool(Search(connect_as("history_searcher"), twin), {"query": "launch", "limit": 2})
    assert set(direct) == set(good)

    def timeless(hits: list[dict[str, Any]]) -> list[dict[str, Any]]:  # recency moves with the clock
        return [{**h, "score": None, "reasons": sorted(h["reasons"])} for h in hits]

    assert timeless(direct["hits"]) == timeless(good["hits"])
    assert not r["strict_nulls"].is_error and len(payload(r["strict_nulls"])["hits"]) == 1

    # what the model got wrong is a tool error (isError), not a crash; the server keeps serving
    assert r["bad"].is_error
    bad = payload(r["bad"])
    assert bad["code"] == "invalid_arguments"
    assert "query is required" in bad["error"] and "unknown argument" in bad["error"]
    assert "limit must be an integer" in bad["error"]
    assert r["inverted"].is_error and payload(r["inverted"])["code"] == "HS001"
    assert r["unknown"].is_error and payload(r["unknown"])["code"] == "unknown_tool"
    assert not r["after_errors"].is_error and payload(r["after_errors"])["hits"][0]["message_id"] == "t4"

    # the audit row of each search the server ran; bad arguments never reach the database,
    # and the rejected time window (HS001) rolled back with its error
    auditor = Auditor(connect_as("history_auditor"))
    verifier = Auditor(connect_as("history_digest_verifier"))
    events = auditor.search_events(run=run)
    ids = {str(e["search_event_id"]) for e in events}
    assert good["search_event_id"] in ids
    assert payload(r["after_errors"])["search_event_id"] in ids
    assert len(events) == 3  # good, strict_nulls, after_errors: checking the run at start-up is no search
    assert verifier.verify_query_digest(good["search_event_id"], "launch")


def test_run_and_dsn_from_the_environment_and_a_run_ending_mid_session(db_dsn, runtime):
    run = runtime.begin_run("agent", "team", "alice", "q")
    env = {"HISTORY_SEARCH_DSN": as_role(db_dsn, "history_searcher"), "HISTORY_SEARCH_RUN": str(run)}

    async def body(client: Any) -> Any:
        tools = await client.list_tools()
        runtime.end_run(run)
        ended = await client.call_tool("search_history", {"query": "launch"})
        return tools, ended

    tools, ended = asyncio.run(session(server_params(env=env), body))
    assert [t.name for t in tools.tools] == ["search_history"]
    assert ended.is_error
    data = payload(ended)
    assert data == {"error": "the run has ended: this turn can search no more", "code": "HS002"}
    assert str(run) not in ended.content[0].text


@pytest.mark.parametrize("state", ["ended", "unknown"])
def test_stdio_checks_its_run_before_serving(db_dsn, runtime, state):
    import subprocess

    run = runtime.begin_run("agent", "team", "alice", "q")
    if state == "ended":
        runtime.end_run(run)
    else:
        run = uuid.uuid4()
    params = server_params(dsn=as_role(db_dsn, "history_searcher"), run=run)
    done = subprocess.run([params.command, *params.args], env=params.env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == f"history-search mcp: the run {'has ended' if state == 'ended' else 'is unknown'}: " \
                          "begin a new run\n"


def test_a_built_wheel_installed_outside_the_checkout_serves_mcp(tmp_path, db_dsn, runtime):
    """The wheel carries py.typed and the MCP server; run from an install outside the repository."""
    import shutil
    import subprocess
    import zipfile
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    src = tmp_path / "src"
    src.mkdir()
    for item in ("pyproject.toml", "setup.py", "README.md", "sqitch.plan", "sqitch.conf", "pyclient", "db"):
        if (root / item).is_dir():
            shutil.copytree(root / item, src / item, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "_sql"))
        elif (root / item).exists():
            shutil.copy2(root / item, src / item)
    wheels = tmp_path / "wheels"
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                            "-w", str(wheels), str(src)], capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    (wheel,) = wheels.glob("history_search-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"history_search/py.typed", "history_search/mcp_server.py"} <= names
    site = tmp_path / "site"
    install = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site),
                              str(wheel)], capture_output=True, text=True)
    assert install.returncode == 0, install.stderr

    run = runtime.begin_run("agent", "team", "alice", "q")
    params = server_params(dsn=as_role(db_dsn, "history_searcher"), run=run, env={"PYTHONPATH": str(site)})
    params.cwd = str(tmp_path)  # nowhere near the checkout

    async def body(client: Any) -> Any:
        return await client.call_tool("search_history", {"query": "launch", "limit": 1})

    result = asyncio.run(session(params, body))
    assert not result.is_error and len(payload(result)["hits"]) == 1


def test_a_database_failure_reaches_the_model_without_connection_details():
    """The server's own log gets the driver's text; the model gets that the search failed, and no DSN."""
    from history_search.mcp_server import _Session

    dsn = "postgresql://secret_login:hunter2@127.0.0.1:1/secret_db?connect_timeout=2"
    result = asyncio.run(_Session(dsn, uuid.uuid4()).call({"query": "launch"}))
    assert result["code"] == "database_error" and result["error"].startswith("the search failed for a database")
    for leak in ("secret_login", "hunter2", "secret_db", "127.0.0.1", "port"):
        assert leak not in json.dumps(result)
