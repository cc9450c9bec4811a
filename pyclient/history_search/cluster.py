"""A throwaway local PostgreSQL cluster, for the tests and ``history-search demo``.

    with ThrowawayCluster() as pg:
        psycopg.connect(pg.dsn)          # superuser "postgres", trust auth, 127.0.0.1

It runs the server binaries of the newest PostgreSQL installed (Debian keeps
one ``/usr/lib/postgresql/<major>/bin`` per major version; ``pg_config
--bindir`` names the *client's* directory, which may lack ``initdb``), in a
fresh directory under ``/tmp`` (short, so the socket path fits in 107 bytes),
with durability switched off, listening on 127.0.0.1 on a free port. When the
process runs as root the server runs as the ``postgres`` OS user
(``initdb``/``pg_ctl`` refuse root). Leaving the ``with`` block — normally or
by an exception — stops the server and removes the directory.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

__all__ = ["ClusterError", "ThrowawayCluster", "find_server_bindir", "server_tool"]


class ClusterError(RuntimeError):
    """The throwaway cluster could not be set up."""


def _major(path: str) -> tuple[int, ...]:
    m = re.search(r"/postgresql/(\d+(?:\.\d+)*)/bin/?$", path)
    return tuple(int(x) for x in m.group(1).split(".")) if m else (0,)


def find_server_bindir() -> Path:
    """The directory with ``postgres``, ``initdb`` and ``pg_ctl`` of the newest installed server.

    ``HISTORY_SEARCH_PG_BINDIR`` overrides the search.
    """
    override = os.environ.get("HISTORY_SEARCH_PG_BINDIR")
    if override:
        if not (Path(override) / "initdb").exists():
            raise ClusterError(f"HISTORY_SEARCH_PG_BINDIR={override} has no initdb")
        return Path(override)

    def has_server(d: str | Path) -> bool:
        return all(os.access(Path(d) / tool, os.X_OK) for tool in ("postgres", "initdb", "pg_ctl"))

    candidates = sorted(
        (d for d in glob.glob("/usr/lib/postgresql/*/bin") if has_server(d)), key=_major, reverse=True
    )
    if candidates:
        return Path(candidates[0])
    # Other layouts (Homebrew, source builds, RPM): pg_config's bindir, or PATH.
    pg_config = shutil.which("pg_config")
    if pg_config:
        try:
            bindir = subprocess.run(
                [pg_config, "--bindir"], capture_output=True, text=True, check=True
            ).stdout.strip()
            if has_server(bindir):
                return Path(bindir)
        except (OSError, subprocess.CalledProcessError):
            pass
    initdb = shutil.which("initdb")
    if initdb and has_server(Path(initdb).parent):
        return Path(initdb).parent
    raise ClusterError(
        "no PostgreSQL server found (looked in /usr/lib/postgresql/*/bin, pg_config --bindir, PATH); "
        "run scripts/bootstrap or install the postgresql package"
    )


def server_tool(name: str) -> str:
    """Path of a client tool (``pg_dump``, ``psql``…) matching the server version, else from PATH."""
    try:
        candidate = find_server_bindir() / name
        if os.access(candidate, os.X_OK):
            return str(candidate)
    except ClusterError:
        pass
    found = shutil.which(name)
    if not found:
        raise ClusterError(f"{name} not found")
    return found


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class ThrowawayCluster:
    """Start a private PostgreSQL server; stop it and delete its files on exit.

    ``settings`` adds or overrides server settings (``{"max_connections": "50"}``).
    ``keep=True`` leaves the directory behind after stopping (for debugging).
    """

    DEFAULT_SETTINGS = {
        "fsync": "off",
        "synchronous_commit": "off",
        "full_page_writes": "off",
        "max_connections": "100",
        "log_min_messages": "warning",
        "log_min_error_statement": "panic",
    }

    def __init__(self, *, bindir: str | os.PathLike[str] | None = None,
                 settings: dict[str, str] | None = None, keep: bool = False,
                 start_timeout: int = 60):
        self.bindir = Path(bindir) if bindir else find_server_bindir()
        self.settings = {**self.DEFAULT_SETTINGS, **(settings or {})}
        self.keep = keep
        self.start_timeout = start_timeout
        self.host = "127.0.0.1"
        self.port: int | None = None
        self.user = "postgres"
        self.base_dir: Path | None = None
        self._running = False
        self._as_postgres = os.geteuid() == 0

    # -- paths -----------------------------------------------------------

    @property
    def data_dir(self) -> Path:
        assert self.base_dir is not None
        return self.base_dir / "data"

    @property
    def socket_dir(self) -> Path:
        assert self.base_dir is not None
        return self.base_dir / "s"

    @property
    def log_file(self) -> Path:
        assert self.base_dir is not None
        return self.base_dir / "log" / "postgres.log"

    @property
    def dsn(self) -> str:
        """libpq URL of the ``postgres`` database as the superuser ``postgres``."""
        return self.dsn_for("postgres")

    def dsn_for(self, dbname: str, user: str | None = None) -> str:
        if self.port is None:
            raise ClusterError("cluster not started")
        return f"postgresql://{user or self.user}@{self.host}:{self.port}/{dbname}"

    def tool(self, name: str) -> str:
        return str(self.bindir / name)

    # -- running commands --------------------------------------------------

    def _cmd(self, *args: str) -> list[str]:
        if self._as_postgres:
            return ["runuser", "-u", "postgres", "--", *args]
        return list(args)

    def _run(self, *args: str, timeout: int | None = None) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            self._cmd(*args), capture_output=True, text=True, timeout=timeout,
            cwd=str(self.base_dir), env={**os.environ, "LC_ALL": "C", "TZ": os.environ.get("TZ", "UTC")},
        )
        return proc

    def _log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_file.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no server log)"

    # -- life cycle --------------------------------------------------------

    def start(self) -> "ThrowawayCluster":
        if self._running:
            return self
        try:
            self._setup_dirs()
            self._initdb()
            last_error = ""
            for _attempt in range(3):  # a free port can be taken before the server binds it
                self.port = _free_port()
                self._write_settings()
                proc = self._run(
                    self.tool("pg_ctl"), "start", "-D", str(self.data_dir), "-l", str(self.log_file),
                    "-w", "-t", str(self.start_timeout), timeout=self.start_timeout + 10,
                )
                if proc.returncode == 0:
                    self._running = True
                    return self
                last_error = f"{proc.stdout}{proc.stderr}\n{self._log_tail()}"
                if "could not bind" not in last_error and "already in use" not in last_error:
                    break
            raise ClusterError(f"pg_ctl start failed:\n{last_error}")
        except BaseException:
            self.stop()
            raise

    def _setup_dirs(self) -> None:
        # /tmp rather than $TMPDIR: the socket path must stay short.
        base = "/tmp" if os.path.isdir("/tmp") else None
        # HISTORY_SEARCH_CLUSTER_PREFIX lets a caller (.ci/run) recognise its own clusters.
        prefix = os.environ.get("HISTORY_SEARCH_CLUSTER_PREFIX", "hs-pg-")
        self.base_dir = Path(tempfile.mkdtemp(prefix=prefix, dir=base))
        for sub in (self.data_dir, self.socket_dir, self.log_file.parent):
            sub.mkdir(mode=0o700)
        if len(str(self.socket_dir / ".s.PGSQL.65535")) > 107:
            raise ClusterError(f"socket path too long under {self.base_dir}")
        if self._as_postgres:
            import pwd

            try:
                pw = pwd.getpwnam("postgres")
            except KeyError as exc:
                raise ClusterError("running as root, but there is no 'postgres' OS user") from exc
            if not shutil.which("runuser"):
                raise ClusterError("running as root needs runuser (util-linux) to start the server as postgres")
            for path in (self.base_dir, self.data_dir, self.socket_dir, self.log_file.parent):
                os.chown(path, pw.pw_uid, pw.pw_gid)

    def _initdb(self) -> None:
        base = [self.tool("initdb"), "-D", str(self.data_dir), "-U", self.user, "--auth=trust",
                "--encoding=UTF8", "--no-sync", "--no-instructions"]
        proc = self._run(*base, "--locale=C.UTF-8", timeout=120)
        if proc.returncode != 0 and "locale" in (proc.stderr + proc.stdout).lower():
            # No C.UTF-8 locale on this system: fall back to C (ASCII-only character classes).
            self._empty_data_dir()
            proc = self._run(*base, "--locale=C", timeout=120)
        if proc.returncode != 0 and "--no-instructions" in (proc.stderr + proc.stdout):
            self._empty_data_dir()  # initdb before PostgreSQL 14
            base.remove("--no-instructions")
            proc = self._run(*base, "--locale=C", timeout=120)
        if proc.returncode != 0:
            raise ClusterError(f"initdb failed:\n{proc.stdout}{proc.stderr}")

    def _empty_data_dir(self) -> None:
        for child in self.data_dir.iterdir():
            shutil.rmtree(child) if child.is_dir() else child.unlink()

    def _write_settings(self) -> None:
        conf = self.data_dir / "postgresql.auto.conf"
        lines = ["# written by history_search.cluster.ThrowawayCluster\n"]
        settings = {
            **self.settings,
            "port": str(self.port),
            "listen_addresses": self.host,
            "unix_socket_directories": str(self.socket_dir),
        }
        for key, value in settings.items():
            escaped = str(value).replace("'", "''")
            lines.append(f"{key} = '{escaped}'\n")
        stat = conf.stat() if conf.exists() else None
        conf.write_text("".join(lines))
        if stat is not None and self._as_postgres:
            os.chown(conf, stat.st_uid, stat.st_gid)

    def _postmaster_pid(self) -> int | None:
        try:
            return int((self.data_dir / "postmaster.pid").read_text().split("\n", 1)[0])
        except (OSError, ValueError, AssertionError):
            return None

    def stop(self) -> None:
        """Stop the server (fast, then immediate, then SIGKILL) and remove its files."""
        if self.base_dir is None:
            return
        try:
            if self.data_dir.exists() and (self.data_dir / "postmaster.pid").exists():
                for mode in ("fast", "immediate"):
                    try:
                        proc = self._run(self.tool("pg_ctl"), "stop", "-D", str(self.data_dir),
                                         "-m", mode, "-w", "-t", "30", timeout=40)
                        if proc.returncode == 0:
                            break
                    except subprocess.TimeoutExpired:
                        pass
                pid = self._postmaster_pid()
                if pid is not None:
                    self._kill(pid)
        finally:
            self._running = False
            if not self.keep:
                shutil.rmtree(self.base_dir, ignore_errors=True)
                self.base_dir = None

    def crash(self) -> None:
        """Stop the server the way a crash would (``pg_ctl stop -m immediate``): no
        checkpoint, no flush of what the WAL buffers still hold. The files stay."""
        proc = self._run(self.tool("pg_ctl"), "stop", "-D", str(self.data_dir), "-m", "immediate", "-w", "-t", "30",
                         timeout=40)
        if proc.returncode != 0:
            raise ClusterError(f"pg_ctl stop -m immediate failed:\n{proc.stdout}{proc.stderr}")
        self._running = False

    def restart(self) -> "ThrowawayCluster":
        """Start the stopped server again on its files and port (crash recovery runs first)."""
        proc = self._run(self.tool("pg_ctl"), "start", "-D", str(self.data_dir), "-l", str(self.log_file),
                         "-w", "-t", str(self.start_timeout), timeout=self.start_timeout + 10)
        if proc.returncode != 0:
            raise ClusterError(f"pg_ctl start failed:\n{proc.stdout}{proc.stderr}\n{self._log_tail()}")
        self._running = True
        return self

    @staticmethod
    def _kill(pid: int) -> None:
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            return
        except PermissionError:
            return
        for _ in range(100):
            try:
                os.kill(pid, 0)
                with open(f"/proc/{pid}/stat") as f:  # a zombie has exited: its reaper is not us
                    if f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                        return
            except (ProcessLookupError, FileNotFoundError):
                return
            except OSError:
                pass
            time.sleep(0.05)

    def __enter__(self) -> "ThrowawayCluster":
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = f"{self.host}:{self.port}" if self._running else "stopped"
        return f"<ThrowawayCluster {self.bindir} {state}>"
