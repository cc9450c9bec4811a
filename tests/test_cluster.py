"""The throwaway cluster used by the tests and by `history-search demo`."""

from __future__ import annotations

import os
import re

import psycopg
import pytest

from history_search.cluster import ThrowawayCluster, find_server_bindir


def _alive(pid: int) -> bool:
    """True while the process runs (an exited one awaiting its reaper counts as gone)."""
    if not os.path.isdir("/proc/self"):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False


def test_server_bindir_is_the_newest_with_a_server():
    bindir = find_server_bindir()
    for tool in ("postgres", "initdb", "pg_ctl"):
        assert os.access(bindir / tool, os.X_OK)
    majors = [int(m) for m in (re.findall(r"/usr/lib/postgresql/(\d+)/bin", str(bindir)))]
    others = [int(d) for d in os.listdir("/usr/lib/postgresql") if d.isdigit()
              and os.access(f"/usr/lib/postgresql/{d}/bin/initdb", os.X_OK)] if os.path.isdir("/usr/lib/postgresql") else []
    if majors and others:
        assert majors[0] == max(others)


def test_cluster_runs_as_configured_and_vanishes_on_exit():
    with ThrowawayCluster() as pg:
        base, pid = pg.base_dir, pg._postmaster_pid()
        assert len(str(pg.socket_dir)) < 90
        with psycopg.connect(pg.dsn) as c:
            settings = dict(c.execute(
                "SELECT name, setting FROM pg_settings WHERE name IN "
                "('fsync', 'synchronous_commit', 'full_page_writes', 'listen_addresses', 'port')"
            ).fetchall())
            assert c.execute("SELECT current_user, rolsuper FROM pg_roles WHERE rolname = current_user").fetchone() == ("postgres", True)
        assert settings == {"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off",
                            "listen_addresses": "127.0.0.1", "port": str(pg.port)}
        if os.geteuid() == 0:
            import pwd

            assert pwd.getpwuid(os.stat(pg.data_dir).st_uid).pw_name == "postgres"
        assert pid is not None and _alive(pid)
    assert not base.exists()
    assert not _alive(pid)


def test_cluster_stops_when_the_block_raises():
    with pytest.raises(RuntimeError, match="boom"):
        with ThrowawayCluster() as pg:
            base, pid = pg.base_dir, pg._postmaster_pid()
            raise RuntimeError("boom")
    assert not base.exists()
    assert not _alive(pid)


def test_extra_settings_apply():
    with ThrowawayCluster(settings={"work_mem": "7MB"}) as pg, psycopg.connect(pg.dsn) as c:
        assert c.execute("SHOW work_mem").fetchone()[0] == "7MB"
