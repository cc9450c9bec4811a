"""``history-search mcp --http``: one long-lived server, many runs, each request bound by its bearer run token.

The server is a subprocess (``python -m history_search mcp --http 127.0.0.1:0``,
so the system picks a free loopback port; the server prints the URL it got) on
this test's database, logged in as ``history_searcher``; it is stopped in a
``finally``. Clients are the MCP SDK's own (``mcp.Client`` over
``streamable_http_client`` with an ``httpx2`` client that carries the
``Authorization`` header, as a host would) and, for the refusals, plain HTTP.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import queue
import subprocess
import sys
import threading
import uuid
from datetime import timedelta
from typing import Any, Iterator

import pytest

from history_search import Auditor, Runtime
from tests.test_mcp import T0, as_role, build_world, payload

SERVE_TIMEOUT = 60


@pytest.fixture
def runtime(connect_as) -> Runtime:
    rt = Runtime(connect_as("history_runtime"))
    build_world(rt)
    rt.post_message("bq", "dm-bob", "bob", "remind me what I said", T0 + timedelta(minutes=11))
    return rt


@contextlib.contextmanager
def http_server(dsn: str, *extra: str) -> Iterator[str]:
    """Start ``history-search mcp --http 127.0.0.1:0``; yield its URL; stop it however the test ends."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HISTORY_SEARCH_")}
    proc = subprocess.Popen([sys.executable, "-m", "history_search", "mcp", "--http", "127.0.0.1:0", "--dsn", dsn,
                             *extra], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    lines: queue.Queue[str | None] = queue.Queue()
    captured: list[str] = []

    def pump() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            captured.append(line)
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    try:
        url = None
        while url is None:
            line = lines.get(timeout=SERVE_TIMEOUT)
            assert line is not None, f"the server exited: {''.join(captured)}"
            if "serving MCP at " in line:
                url = line.split("serving MCP at ", 1)[1].split()[0]
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextlib.asynccontextmanager
async def client(url: str, token: str | None):
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
        async with Client(streamable_http_client(url, http_client=http), read_timeout_seconds=60) as c:
            yield c


def raw_post(url: str, body: dict[str, Any], headers: dict[str, str]) -> Any:
    import httpx2

    return httpx2.post(url, json=body, timeout=30, headers={
        "Accept": "application/json, text/event-stream", "Content-Type": "application/json", **headers})


LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}


def test_two_concurrent_sessions_each_get_their_own_run(db_dsn, connect_as, runtime):
    # run A answers alice in the team: bob's DM is not hers to see; run B answers bob in his DM
    run_a = runtime.begin_run("agent", "team", "alice", "q")
    run_b = runtime.begin_run("agent", "dm-bob", "bob", "bq")

    async def turn(url: str, token: uuid.UUID, queries: list[str]) -> dict[str, Any]:
        async with client(url, str(token)) as c:
            listed = await c.list_tools()
            results = []
            for q in queries:
                results.append(await c.call_tool("search_history", {"query": q}))
                await asyncio.sleep(0)  # interleave with the other session
            return {"listed": listed, "results": results}

    async def both(url: str) -> list[dict[str, Any]]:
        return list(await asyncio.gather(turn(url, run_a, ["launch", "private worry", "launch note"]),
                                         turn(url, run_b, ["private worry", "launch", "worry"])))

    with http_server(as_role(db_dsn, "history_searcher")) as url:
        a, b = asyncio.run(both(url))

    [tool] = a["listed"].tools
    assert tool.name == "search_history" and tool.output_schema and tool.annotations.read_only_hint is False
    a_data = [payload(r) for r in a["results"]]
    b_data = [payload(r) for r in b["results"]]
    assert not any(r.is_error for r in a["results"] + b["results"]), a_data + b_data
    a_ids = {h["message_id"] for d in a_data for h in d["hits"]}
    b_ids = {h["message_id"] for d in b_data for h in d["hits"]}
    assert a_ids and a_ids <= {f"t{i}" for i in range(5)} | {"q"}  # never bob's DM
    assert "secret" in b_ids  # bob's own DM is his to see
    assert all(n["message_id"] != "secret" for d in a_data for h in d["hits"] for n in h["before"] + h["after"])

    # audited under its own run: each run's events are exactly its searches (checking the run
    # when the server first saw its token is not a search)
    auditor = Auditor(connect_as("history_auditor"))
    events_a = {str(e["search_event_id"]) for e in auditor.search_events(run=run_a)}
    events_b = {str(e["search_event_id"]) for e in auditor.search_events(run=run_b)}
    assert {d["search_event_id"] for d in a_data} == events_a
    assert {d["search_event_id"] for d in b_data} == events_b
    assert not events_a & events_b
    verifier = Auditor(connect_as("history_digest_verifier"))
    assert verifier.verify_query_digest(b_data[0]["search_event_id"], "private worry")


def test_no_token_a_wrong_one_or_an_ended_runs_gets_no_hit(db_dsn, connect_as, runtime):
    run = runtime.begin_run("agent", "team", "alice", "q")
    ended_unseen = runtime.begin_run("agent", "team", "alice", "q")
    runtime.end_run(ended_unseen)
    ghost = uuid.uuid4()

    async def refused(url: str, token: str | None) -> str:
        """The error the SDK's client raises for the 401, as its message."""
        from mcp.shared.exceptions import MCPError

        try:
            async with client(url, token) as c:
                result = await c.call_tool("search_history", {"query": "launch"})
        except BaseException as exc:  # the SDK raises MCPError, inside ExceptionGroups of its task groups
            while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
                exc = exc.exceptions[0]
            assert isinstance(exc, MCPError), repr(exc)
            return str(exc)
        raise AssertionError(f"served without a valid run: {result}")

    async def during_and_after(url: str) -> tuple[Any, Any, Any]:
        async with client(url, str(run)) as c:
            before = await c.call_tool("search_history", {"query": "launch"})
            runtime.end_run(run)  # the runtime ends the turn while the session is open
            after = await c.call_tool("search_history", {"query": "launch"})
        return before, after, await refused(url, str(run))

    with http_server(as_role(db_dsn, "history_searcher")) as url:
        for token, said in ((None, "no run token"), (str(ghost), "the run is unknown"),
                            (str(ended_unseen), "the run has ended"), ("not-a-uuid", "not a run token")):
            assert said in asyncio.run(refused(url, token))
        # what the refusals say, over plain HTTP: 401, a JSON-RPC error, never the token
        cases = {
            "no run token": {},
            "not a Bearer run token": {"Authorization": f"Basic {run}"},
            "not a run token": {"Authorization": "Bearer not-a-uuid"},
            "the run is unknown": {"Authorization": f"Bearer {ghost}"},
            "the run has ended": {"Authorization": f"Bearer {ended_unseen}"},
        }
        for said, headers in cases.items():
            response = raw_post(url, LIST, headers)
            assert response.status_code == 401, (said, response.text)
            assert response.headers["www-authenticate"].startswith("Bearer")
            error = response.json()["error"]
            assert said in error["message"], (said, error)
            assert str(ghost) not in response.text and str(ended_unseen) not in response.text
        before, after, then = asyncio.run(during_and_after(url))
        ended_again = raw_post(url, LIST, {"Authorization": f"Bearer {run}"})

    assert not before.is_error and payload(before)["hits"]
    # the run ended mid-session: the next search is a tool error the model can read, without the token
    assert after.is_error and payload(after) == {"error": "the run has ended: this turn can search no more",
                                                 "code": "HS002"}
    assert str(run) not in after.content[0].text
    assert "the run has ended" in then  # and from then on the token is refused at the door
    assert ended_again.status_code == 401 and "the run has ended" in ended_again.json()["error"]["message"]

    auditor = Auditor(connect_as("history_auditor"))
    assert auditor.search_events(run=ended_unseen) == [] and auditor.search_events(run=ghost) == []
    assert len(auditor.search_events(run=run)) == 1  # `before` alone: the check is no search; nothing after the end


def test_a_legacy_session_stays_with_the_token_that_opened_it(db_dsn, runtime):
    """Clients of the 2025 protocol get an Mcp-Session-Id; another run's token cannot use it."""
    run_a = runtime.begin_run("agent", "team", "alice", "q")
    run_b = runtime.begin_run("agent", "dm-bob", "bob", "bq")
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "legacy-host", "version": "1"}}}
    with http_server(as_role(db_dsn, "history_searcher")) as url:
        opened = raw_post(url, init, {"Authorization": f"Bearer {run_a}"})
        assert opened.status_code == 200, opened.text
        session = opened.headers["mcp-session-id"]
        common = {"Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-06-18"}
        raw_post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"},
                 {"Authorization": f"Bearer {run_a}", **common})
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "search_history", "arguments": {"query": "launch"}}}
        own = raw_post(url, call, {"Authorization": f"Bearer {run_a}", **common})
        other = raw_post(url, call, {"Authorization": f"Bearer {run_b}", **common})
        none = raw_post(url, call, common)

    assert own.status_code == 200 and json.loads(own.text)["result"]["structuredContent"]["hits"]
    assert other.status_code == 404 and "hits" not in other.text
    assert none.status_code == 401


def test_bad_listen_addresses_and_a_bad_dsn_are_one_line_errors(db_dsn):
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("HISTORY_SEARCH_")}
        return subprocess.run([sys.executable, "-m", "history_search", "mcp", *args], env=env,
                              capture_output=True, text=True, timeout=SERVE_TIMEOUT)

    for listen, said in (("127.0.0.1:http", "port 'http' is not a number"), ("::1:80", "in brackets"),
                         ("127.0.0.1:70000", "out of range")):
        done = run("--http", listen, "--dsn", db_dsn)
        assert done.returncode == 2 and said in done.stderr, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
    both = run("--http", "127.0.0.1:0", "--run", str(uuid.uuid4()), "--dsn", db_dsn)
    assert both.returncode == 2 and "--run is for stdio" in both.stderr
    bad_dsn = run("--http", "127.0.0.1:0", "--dsn", "postgresql://nobody@127.0.0.1:1/none?connect_timeout=2")
    assert bad_dsn.returncode == 2 and "serving" not in bad_dsn.stderr
    assert len(bad_dsn.stderr.strip().splitlines()) == 1, bad_dsn.stderr


def test_strict_publishes_the_strict_schema_with_metadata(db_dsn, runtime):
    from history_search import TOOL_ANNOTATIONS, output_schema, tool_schema

    run = runtime.begin_run("agent", "team", "alice", "q")

    async def body(url: str) -> Any:
        async with client(url, str(run)) as c:
            listed = await c.list_tools()
            nulls = await c.call_tool("search_history", {"query": "launch", "speaker": None, "after": None,
                                                         "before": None, "limit": None})
            return listed, nulls

    with http_server(as_role(db_dsn, "history_searcher"), "--strict") as url:
        listed, nulls = asyncio.run(body(url))
    [tool] = listed.tools
    assert tool.input_schema == tool_schema(strict=True) and tool.output_schema == output_schema()
    assert tool.annotations.model_dump(by_alias=True, exclude_none=True) == TOOL_ANNOTATIONS
    assert not nulls.is_error and payload(nulls)["hits"]  # validated against outputSchema by the SDK's client
