"""A throwaway Citus cluster on one machine: a coordinator and workers, each a
:class:`~history_search.cluster.ThrowawayCluster` started with
``shared_preload_libraries=citus``. For the Citus tests and ``history-search
bench --citus``.

    with ThrowawayCitusCluster(workers=2) as citus:
        url = citus.create_database("hs")   # on every node, CREATE EXTENSION citus, workers registered
        psycopg.connect(url)                 # the coordinator

Citus keeps its node list per database and does not create databases on the
workers, so :meth:`create_database` makes the database on every node, creates
the extension in each, and registers the coordinator and the workers in the
coordinator's copy. Needs Citus installed into the server's PostgreSQL
(``../shared/citus/build``, or ``$HISTORY_SEARCH_CITUS_SRC/build``).
"""

from __future__ import annotations

import os
from pathlib import Path

from .cluster import ClusterError, ThrowawayCluster, find_server_bindir

__all__ = ["CITUS_SRC_ENV", "ThrowawayCitusCluster", "citus_installed"]

#: Where the Citus source tarball and its build script live (a test dependency, never vendored).
CITUS_SRC_ENV = "HISTORY_SEARCH_CITUS_SRC"


def citus_installed(bindir: Path | None = None) -> bool:
    """Is ``citus.so`` installed for the server the throwaway clusters run?"""
    bindir = bindir or find_server_bindir()
    return (bindir.parent / "lib" / "citus.so").exists()


class ThrowawayCitusCluster:
    """A coordinator and ``workers`` workers on loopback ports; stopped and deleted on exit."""

    SETTINGS = {
        "shared_preload_libraries": "citus",
        # The nodes talk over loopback without TLS (Citus asks for sslmode=require by default).
        "citus.node_conninfo": "sslmode=prefer",
        "max_connections": "200",
        "max_prepared_transactions": "100",  # 2PC across nodes
        "max_worker_processes": "32",  # Citus' maintenance daemon: one per database
    }

    def __init__(self, *, workers: int = 2, settings: dict[str, str] | None = None, keep: bool = False):
        if not citus_installed():
            src = os.environ.get(CITUS_SRC_ENV, "/work/shared/citus")
            raise ClusterError(
                f"Citus is not installed for {find_server_bindir()}: run `bash {src}/build` as root "
                f"(set {CITUS_SRC_ENV} to the folder holding Citus' source and build script)")
        merged = {**self.SETTINGS, **(settings or {})}
        self.nodes = [ThrowawayCluster(settings=merged, keep=keep) for _ in range(workers + 1)]

    @property
    def coordinator(self) -> ThrowawayCluster:
        return self.nodes[0]

    @property
    def workers(self) -> list[ThrowawayCluster]:
        return self.nodes[1:]

    @property
    def dsn(self) -> str:
        return self.coordinator.dsn

    def start(self) -> "ThrowawayCitusCluster":
        try:
            for node in self.nodes:
                node.start()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        for node in reversed(self.nodes):
            node.stop()

    def create_database(self, name: str) -> str:
        """Create ``name`` on every node with Citus in it and the workers registered; its coordinator URL."""
        import psycopg
        from psycopg import sql

        for node in self.nodes:
            with psycopg.connect(node.dsn, autocommit=True) as c:
                c.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
            with psycopg.connect(node.dsn_for(name), autocommit=True) as c:
                c.execute("CREATE EXTENSION citus")
        with psycopg.connect(self.coordinator.dsn_for(name), autocommit=True) as c:
            c.execute("SELECT citus_set_coordinator_host(%s, %s)", (self.coordinator.host, self.coordinator.port))
            for worker in self.workers:
                c.execute("SELECT citus_add_node(%s, %s)", (worker.host, worker.port))
        return self.coordinator.dsn_for(name)

    def drop_database(self, name: str) -> None:
        import psycopg
        from psycopg import sql

        for node in self.nodes:
            with psycopg.connect(node.dsn, autocommit=True) as c:
                c.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))

    def __enter__(self) -> "ThrowawayCitusCluster":
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
