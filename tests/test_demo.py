"""The demo end to end: against this test's database, and on its own throwaway server.

Fixture (tests/harness.py): ``db_dsn``.
"""

from __future__ import annotations

import io
import re

import pytest

from history_search.demo import run_demo


def check_output(text: str) -> None:
    # the world and the earlier turn with its reply built on the linked account's DM
    assert re.search(r"\d+ messages in [\d.]+s", text)
    assert "alice (mail) (requester)" in text
    assert re.search(r"record_reply -> \S+:dm-1-reply posted in \S+ with lineage \[\S+:mail-1\]", text)
    # searches with hits, neighbours and reasons
    assert 'search("Atlas launch date", limit=3)' in text
    assert re.search(r"#1 \S+:launch-1 +alice \(requester\)", text)
    assert re.search(r"after +bob .*Rollout checklist", text)
    assert re.search(r"score [\d.]+ = text [\d.]+ \+ coverage [\d.]+ \+ actor", text)
    # one private message filtered out, explained by the audit row
    assert "excluded_audience 1" in text and "leads-private" in text
    # what the model reads, and the tool's validation
    assert "| search_history: 3 hits, best first" in text
    assert "limit must be between 1 and 20, got 50" in text
    assert "has no time zone" in text and "unknown argument" in text
    # audit rows, digest verification, delivery
    assert "history.search_audit" in text and "history.search_audit_messages" in text
    assert re.search(r"verify_query_digest\(\S+, 'security review risk'\) -> True", text)
    assert re.search(r"verify_query_digest\(\S+, 'launch moves to July'\) -> False", text)
    assert "check_delivery -> nothing blocks delivery" in text
    # the budget drains to exactly 400, then new messages are withheld
    used = [int(m) for m in re.findall(r"^  \".*?\s+\d+\s+\d+\s+(\d+)\s+\d+  \S+$", text, re.M)]
    assert used == sorted(used) and used[-1] == 400 and len(used) >= 3
    assert re.search(r"\b400\s+0  search_budget_exhausted", text)
    assert re.search(r"audit of that last search: budget [1-9]", text)
    # delivery blocked by a revoked proof
    assert "proof_revoked" in text
    assert "record_reply -> DeliveryBlocked [HS005]" in text
    assert "end_run (nothing was posted)" in text
    # what only the project's text analysis finds: a ticket number, a file name, a Japanese word
    assert re.search(r'search\("4821", limit=3\)\n.*\n +#1 \S+:launch-ticket ', text)
    assert re.search(r'search\("session.py", limit=3\)\n.*\n +#1 \S+:launch-ticket ', text)
    assert re.search(r'search\("会議", limit=3\)\n.*\n +#1 \S+:tokyo-1 ', text)
    assert len(re.findall(r"english parser alone: .* -> no match for", text)) == 3


def test_demo_against_a_database(db_dsn):
    out = io.StringIO()
    assert run_demo(db_dsn, out=out) == 0
    text = out.getvalue()
    check_output(text)
    assert ("runtime as history_runtime, model-side search as history_searcher, auditor as history_auditor, "
            "digest checks as history_digest_verifier") in text
    # it says up front that it writes sample data into this database, and that the data stays
    name = db_dsn.rsplit("/", 1)[1].split("?")[0]
    assert re.search(rf"NOTE: this writes sample data into database {name} and leaves it there: .*"
                     r"ids starting 'acme-[0-9a-f]{4}:'", text)
    assert re.search(rf"The sample data \(ids starting 'acme-[0-9a-f]{{4}}:'\) is still in database {name}\.", text)
    # a second run in the same database does not collide (fresh id prefix)
    again = io.StringIO()
    assert run_demo(db_dsn, out=again) == 0
    check_output(again.getvalue())


def test_demo_on_its_own_throwaway_server():
    # No skip: a machine without PostgreSQL server binaries fails here.
    out = io.StringIO()
    assert run_demo(out=out) == 0
    text = out.getvalue()
    check_output(text)
    assert "throwaway PostgreSQL at postgresql://" in text
    assert "the throwaway server is stopped and removed" in text
