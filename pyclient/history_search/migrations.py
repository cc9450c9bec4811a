"""Apply the sqitch plan with yoyo.

The SQL lives in sqitch's layout (``sqitch.plan`` at the root, scripts under
``db/deploy|revert|verify/<change>.sql``) so that a DBA can use ``sqitch``
directly. yoyo cannot read that layout by itself, so this module reads the
plan and builds one :class:`yoyo.migrations.Migration` per plan change:

* step 1: the deploy script, with the revert script as its rollback;
* step 2: the verify script, run inside a savepoint that is rolled back, so a
  failing verification aborts the migration and a passing one leaves nothing.

Each migration depends on the plan's ``[requires]`` and on the previous change,
so yoyo applies them in plan order. yoyo tracks a migration by its id, which is
the change name: renaming a change in the plan breaks tracking.

Before anything is applied, the server must be PostgreSQL 14 or newer
(:func:`check_server_version`) and the database must not have been deployed
with ``sqitch`` (:func:`sqitch_deployed_changes`): one database keeps one
registry, yoyo's or sqitch's, and the other tool refuses it with a one-line
:class:`MigrationError` that says what to do (the first plan change, ``roles``,
refuses a sqitch deploy onto a yoyo-migrated database the same way).

Before a script reaches yoyo, sqitch's top-level transaction lines (``BEGIN;``,
``COMMIT;``, and ``ROLLBACK;`` in verify scripts) are removed — yoyo runs its
own transaction and savepoints — and psql's ``\\ir path`` lines are replaced by
the referenced file (recursively, relative to the including file), so one
function can live in one file under ``db/functions/``.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable
from urllib.parse import quote, urlencode, urlsplit, urlunsplit

if TYPE_CHECKING:
    import psycopg

__all__ = [
    "MIN_SERVER_VERSION_NUM",
    "MigrationError",
    "ROLES",
    "PlanChange",
    "PlanError",
    "Plan",
    "apply_migrations",
    "change_hash",
    "check_deployed_changes",
    "check_migrating_role",
    "check_server_version",
    "deployed_release",
    "expand_includes",
    "load_script",
    "pending",
    "plan_migrations",
    "read_plan",
    "sqitch_deployed_changes",
    "sql_root",
    "take_owner_role",
    "citus_coordinator",
    "yoyo_applied",
    "yoyo_url",
]

PLAN_FILE = "sqitch.plan"
TOP_DIR = "db"


class PlanError(ValueError):
    """The plan or one of its scripts cannot be read as sqitch would."""


class MigrationError(RuntimeError):
    """The database cannot be migrated as it is (server too old, deployed by sqitch).

    Its message is one line that says what to do.
    """


#: PostgreSQL 14: the schema uses multiranges (membership windows).
MIN_SERVER_VERSION_NUM = 140000


# --------------------------------------------------------------------------
# Where the SQL is
# --------------------------------------------------------------------------


def sql_root() -> Path:
    """The directory holding ``sqitch.plan`` and ``db/``.

    An installed wheel carries them in ``history_search/_sql``; a checkout (or an
    editable install) has them at the repository root. ``HISTORY_SEARCH_SQL_DIR``
    overrides both.
    """
    override = os.environ.get("HISTORY_SEARCH_SQL_DIR")
    candidates = [Path(override)] if override else []
    here = Path(__file__).resolve().parent
    candidates += [here / "_sql", here.parent.parent]
    for root in candidates:
        if (root / PLAN_FILE).is_file() and (root / TOP_DIR / "deploy").is_dir():
            return root
    raise PlanError(
        f"cannot find {PLAN_FILE} and {TOP_DIR}/deploy in any of: "
        + ", ".join(str(c) for c in candidates)
    )


# --------------------------------------------------------------------------
# The plan
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class PlanChange:
    name: str
    #: the yoyo id: the name, or ``name@rework<k>`` for a reworked change's k-th instance
    id: str
    requires: tuple[str, ...]  # yoyo ids of the changes this one requires
    conflicts: tuple[str, ...]
    planned_at: str
    planner: str
    note: str
    #: script file stem: the name, or ``name@TAG`` for an instance that was reworked later
    script: str
    line: int


@dataclass
class Plan:
    path: Path
    project: str | None
    pragmas: dict[str, str]
    changes: list[PlanChange] = field(default_factory=list)
    tags: dict[str, int] = field(default_factory=dict)  # tag -> number of changes before it

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.changes]


_TS = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"
_CHANGE_RE = re.compile(
    r"^(?P<op>[+-])?\s*(?P<name>[^\s\[\]@#:%+-][^\s\[\]@#:]*)"
    r"\s*(?:\[(?P<deps>[^\]]*)\])?"
    rf"\s+(?P<ts>{_TS})"
    r"\s+(?P<planner>[^<]*?)\s*<(?P<email>[^>]*)>"
    r"\s*(?:#\s?(?P<note>.*))?$"
)
_TAG_RE = re.compile(
    r"^@(?P<name>[^\s\[\]@#:/\\]+)"
    rf"\s+(?P<ts>{_TS})"
    r"\s+(?P<planner>[^<]*?)\s*<(?P<email>[^>]*)>"
    r"\s*(?:#\s?(?P<note>.*))?$"
)
_PRAGMA_RE = re.compile(r"^%\s*(?P<key>[\w-]+)\s*=\s*(?P<value>.*?)\s*$")


def read_plan(path: str | os.PathLike[str] | None = None) -> Plan:
    """Parse a sqitch plan file.

    Supports pragmas, comments, blank lines, changes with dependencies
    (``name``, ``name@tag``, ``project:name``, ``!conflict``), tags (recorded and
    otherwise ignored) and reworked changes (a name planned again after a tag;
    the earlier instance's scripts are ``<name>@<tag>.sql`` for the first tag
    between it and its next instance that has a deploy script, as sqitch looks
    them up: ``sqitch rework`` names the copy after the newest tag).
    """
    path = Path(path) if path is not None else sql_root() / PLAN_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise PlanError(f"cannot read plan {path}: {exc}") from exc

    pragmas: dict[str, str] = {}
    raw: list[tuple[int, re.Match[str]]] = []  # changes in order
    tags: dict[str, int] = {}
    tag_positions: list[tuple[int, str]] = []  # (number of changes before, tag)

    for lineno, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("%"):
            m = _PRAGMA_RE.match(stripped)
            if not m:
                raise PlanError(f"{path}:{lineno}: malformed pragma: {line!r}")
            pragmas[m["key"]] = m["value"]
            continue
        if stripped.startswith("@"):
            m = _TAG_RE.match(stripped)
            if not m:
                raise PlanError(f"{path}:{lineno}: malformed tag: {line!r}")
            if m["name"] in tags:
                raise PlanError(f"{path}:{lineno}: tag @{m['name']} is planned twice")
            if not raw:
                raise PlanError(f"{path}:{lineno}: tag @{m['name']} comes before any change")
            tags[m["name"]] = len(raw)
            tag_positions.append((len(raw), m["name"]))
            continue
        m = _CHANGE_RE.match(stripped)
        if not m:
            raise PlanError(f"{path}:{lineno}: cannot parse plan line: {line!r}")
        if m["op"] == "-":
            raise PlanError(f"{path}:{lineno}: '-' (revert) entries are not supported: {line!r}")
        raw.append((lineno, m))

    project = pragmas.get("project")
    plan = Plan(path=path, project=project, pragmas=pragmas, tags=tags)

    # Reworked changes: the same name planned again after a tag.
    occurrences: dict[str, list[int]] = {}
    for index, (_lineno, m) in enumerate(raw):
        occurrences.setdefault(m["name"], []).append(index)

    def rework_tags(index: int, next_index: int) -> list[str]:
        """The tags planned after change ``index`` and before ``next_index``."""
        return [tag for before, tag in tag_positions if index < before <= next_index]

    deploy_dir = path.parent / TOP_DIR / "deploy"  # sqitch.conf: top_dir = db, beside the plan

    ids: list[str] = []
    scripts: list[str] = []
    for index, (lineno, m) in enumerate(raw):
        name = m["name"]
        occ = occurrences[name]
        k = occ.index(index)
        ids.append(name if k == 0 else f"{name}@rework{k}")
        if k + 1 < len(occ):  # reworked later: this instance's scripts carry a tag
            candidates = rework_tags(index, occ[k + 1])
            if not candidates:
                raise PlanError(
                    f"{path}:{lineno}: change {name} is planned again without a tag in between"
                )
            found = [t for t in candidates if (deploy_dir / f"{name}@{t}.sql").exists()]
            scripts.append(f"{name}@{(found or candidates)[0]}")
        else:
            scripts.append(name)

    def resolve(dep: str, index: int, lineno: int) -> str:
        """yoyo id of the change a dependency names, looking only at earlier changes."""
        if ":" in dep:
            dep_project, dep = dep.split(":", 1)
            if dep_project != project:
                raise PlanError(
                    f"{path}:{lineno}: dependency on another project ({dep_project}:{dep}) "
                    "cannot be applied with yoyo"
                )
        tag = None
        if "@" in dep:
            dep, tag = dep.split("@", 1)
            if tag not in tags:
                raise PlanError(f"{path}:{lineno}: unknown tag @{tag} in dependency")
        limit = tags[tag] if tag is not None else index
        candidates = [i for i in occurrences.get(dep, []) if i < limit]
        if not candidates:
            raise PlanError(
                f"{path}:{lineno}: change {raw[index][1]['name']} requires {dep!r}, "
                "which is not planned before it"
            )
        return ids[candidates[-1]]

    for index, (lineno, m) in enumerate(raw):
        requires: list[str] = []
        conflicts: list[str] = []
        for dep in (m["deps"] or "").split():
            if dep.startswith("!"):
                conflicts.append(dep[1:])
            else:
                requires.append(resolve(dep, index, lineno))
        plan.changes.append(
            PlanChange(
                name=m["name"],
                id=ids[index],
                requires=tuple(requires),
                conflicts=tuple(conflicts),
                planned_at=m["ts"],
                planner=f"{m['planner']} <{m['email']}>",
                note=(m["note"] or "").strip(),
                script=scripts[index],
                line=lineno,
            )
        )
    return plan


# --------------------------------------------------------------------------
# Scripts
# --------------------------------------------------------------------------

_DOLLAR_RE = re.compile(r"\$([A-Za-z_][A-Za-z_0-9]*)?\$")
_TX_LINE_RE = re.compile(
    r"^\s*(BEGIN|START\s+TRANSACTION|COMMIT|ROLLBACK)(\s+(WORK|TRANSACTION))?\s*;\s*(--.*)?$",
    re.IGNORECASE,
)
_INCLUDE_RE = re.compile(r"^\s*\\(ir|include_relative)\s+(?P<path>'[^']*'|\S+)\s*$")
_OTHER_META_RE = re.compile(r"^\s*\\[A-Za-z!?]")


def _dollar_state(line: str, open_tag: str | None) -> str | None:
    """Track dollar quoting across a line (``--`` comments and '...' strings outside quotes are skipped)."""
    i = 0
    n = len(line)
    while i < n:
        if open_tag is None:
            ch = line[i]
            if ch == "-" and line.startswith("--", i):
                return None
            if ch == "'":
                j = line.find("'", i + 1)
                while j != -1 and line.startswith("''", j):
                    j = line.find("'", j + 2)
                if j == -1:
                    return None
                i = j + 1
                continue
            if ch == "$":
                m = _DOLLAR_RE.match(line, i)
                if m and not (i > 0 and (line[i - 1].isalnum() or line[i - 1] == "_")):
                    open_tag = m.group(0)
                    i = m.end()
                    continue
            i += 1
        else:
            j = line.find(open_tag, i)
            if j == -1:
                return open_tag
            i = j + len(open_tag)
            open_tag = None
    return open_tag


def load_script(path: str | os.PathLike[str]) -> str:
    """Read a sqitch script as yoyo must run it.

    Removes top-level ``BEGIN;``/``COMMIT;``/``ROLLBACK;`` lines and inlines
    ``\\ir`` / ``\\include_relative`` files. Any other psql meta-command is an
    error, since only psql could run it.
    """
    return _read_script(path, for_yoyo=True)


def expand_includes(path: str | os.PathLike[str]) -> str:
    """A script as psql runs it: each ``\\ir`` line replaced by the file it names, nothing else changed.

    This is what a change *means*, and what a release freezes: a released
    change's expansion never changes (tests/test_releases.py), and a reworked
    change's earlier instance is kept in this form (``scripts/rework``), so the
    function files it included may change afterwards.
    """
    return _read_script(path, for_yoyo=False)


def _read_script(path: str | os.PathLike[str], *, for_yoyo: bool, _stack: tuple[Path, ...] = ()) -> str:
    path = Path(path).resolve()
    if path in _stack:
        chain = " -> ".join(str(p) for p in (*_stack, path))
        raise PlanError(f"\\ir cycle: {chain}")
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise PlanError(f"cannot read script {path}: {exc}") from exc

    out: list[str] = []
    open_tag: str | None = None
    for lineno, line in enumerate(text.splitlines(keepends=True), start=1):
        if open_tag is None:
            if for_yoyo and _TX_LINE_RE.match(line):
                # Keep the line (as a comment) so error positions still match the file.
                out.append("-- " + line.lstrip().rstrip("\n") + "  (removed for yoyo)\n")
                continue
            inc = _INCLUDE_RE.match(line.rstrip("\n"))
            if inc:
                target = inc["path"].strip("'")
                included = _read_script(path.parent / target, for_yoyo=for_yoyo, _stack=(*_stack, path))
                if for_yoyo:
                    out.append(f"-- begin \\ir {target}\n")
                out.append(included if included.endswith("\n") else included + "\n")
                if for_yoyo:
                    out.append(f"-- end \\ir {target}\n")
                continue
            if _OTHER_META_RE.match(line):
                raise PlanError(
                    f"{path}:{lineno}: psql meta-command other than \\ir is not supported: {line.strip()!r}"
                )
        out.append(line)
        open_tag = _dollar_state(line, open_tag)
    return "".join(out)


# --------------------------------------------------------------------------
# yoyo
# --------------------------------------------------------------------------


def yoyo_url(dsn: str) -> str:
    """Turn a libpq URL or key=value string into a yoyo URL for psycopg 3."""
    dsn = dsn.strip()
    if dsn.startswith("postgresql+psycopg://"):
        return dsn
    parts = urlsplit(dsn)
    if parts.scheme in ("postgresql", "postgres"):
        return urlunsplit(("postgresql+psycopg",) + tuple(parts)[1:])
    if "://" in dsn:
        raise ValueError(f"not a PostgreSQL URL: {parts.scheme}://…")
    # key=value conninfo: let libpq's parser read it, then pass it as a URL.
    from psycopg.conninfo import conninfo_to_dict

    params = {k: str(v) for k, v in conninfo_to_dict(dsn).items()}
    user = params.pop("user", None)
    password = params.pop("password", None)
    dbname = params.pop("dbname", None)
    host = params.get("host")
    port = params.pop("port", None)
    netloc = ""
    if host and not host.startswith("/") and "," not in host:
        params.pop("host")
        netloc = host if ":" not in host else f"[{host}]"
        if port:
            netloc += f":{port}"
    elif port:
        params["port"] = port
    if user:
        cred = quote(user, safe="")
        if password:
            cred += ":" + quote(password, safe="")
        netloc = f"{cred}@{netloc}"
    elif password:
        params["password"] = password
    query = f"?{urlencode(params)}" if params else ""
    return f"postgresql+psycopg://{netloc}/{quote(dbname or '', safe='')}{query}"


def _run_sql(sql: str, what: str) -> Callable[[Any], None]:
    def run(connection: Any) -> None:
        with connection.cursor() as cur:
            try:
                cur.execute(sql)
            except Exception as exc:
                exc.add_note(f"history-search: while running {what}")
                raise

    run.__name__ = f"run {what}"
    return run


def _run_verify(sql: str, what: str) -> Callable[[Any], None]:
    def run(connection: Any) -> None:
        with connection.cursor() as cur:
            cur.execute("SAVEPOINT history_search_verify")
            try:
                cur.execute(sql)
            except Exception as exc:
                exc.add_note(f"history-search: verification failed: {what}")
                raise
            cur.execute("ROLLBACK TO SAVEPOINT history_search_verify")
            cur.execute("RELEASE SAVEPOINT history_search_verify")

    run.__name__ = f"verify {what}"
    return run


def plan_migrations(root: str | os.PathLike[str] | None = None, *, distributed: bool = False) -> Any:
    """One yoyo migration per change of the plan under ``root`` (default: :func:`sql_root`).

    ``distributed``: for a database whose tables Citus already distributes, a
    change's script that has a counterpart under ``db/citus/`` (same kind, same
    name: :data:`CITUS_DIR`) runs that instead; yoyo records the same change
    and hash.
    """
    from yoyo.migrations import Migration, MigrationList, StepCollector

    root = Path(root) if root is not None else sql_root()
    plan = read_plan(root / PLAN_FILE)
    top = root / TOP_DIR

    class PlanMigration(Migration):  # type: ignore[misc]  # yoyo ships no type information
        """A migration whose steps come from a sqitch change rather than a yoyo file."""

        def __init__(self, change: PlanChange, deploy: str, revert: str, verify: str, content_hash: str):
            super().__init__(change.id, str(top / "deploy" / f"{change.script}.sql"), str(top))
            # yoyo records this hash for each applied change; it names the change's
            # content, not only its name, so a database deployed from other scripts
            # (a development build) is recognised (check_deployed_changes).
            self.hash = content_hash
            self.change = change
            self._scripts = (deploy, revert, verify)
            self.source = deploy
            self._plan_depends: set[Migration] = set()

        def load(self) -> None:
            if self.loaded:
                return
            deploy, revert, verify = self._scripts
            collector = StepCollector(migration=self)
            collector.add_step(
                _run_sql(deploy, f"deploy/{self.change.script}.sql"),
                _run_sql(revert, f"revert/{self.change.script}.sql"),
            )
            collector.add_step(_run_verify(verify, f"verify/{self.change.script}.sql"))
            self._depends = set(self._plan_depends)
            self.use_transactions = True
            self.steps = collector.create_steps(self.use_transactions)

    by_id: dict[str, PlanMigration] = {}
    migrations = []
    previous = None
    for change in plan.changes:
        scripts = []
        for kind in ("deploy", "revert", "verify"):
            script = top / kind / f"{change.script}.sql"
            if not script.is_file():
                raise PlanError(f"change {change.name} has no {kind} script: {script}")
            variant = top / CITUS_DIR / kind / f"{change.script}.sql"
            scripts.append(load_script(variant if distributed and variant.is_file() else script))
        content = change_hash(change.id, expand_includes(top / "deploy" / f"{change.script}.sql"))
        deploy, revert, verify = scripts
        migration = PlanMigration(change, deploy, revert, verify, content)
        deps = {by_id[r] for r in change.requires}
        if previous is not None:
            deps.add(previous)
        migration._plan_depends = deps
        by_id[change.id] = migration
        migrations.append(migration)
        previous = migration
    return MigrationList(migrations)


#: Under ``db/``: where Citus refuses a released change's script on tables it
#: already distributes (an upgrade of a distributed database), ``citus/deploy/``
#: or ``citus/verify/`` holds a script of the same name that does the same in
#: statements Citus accepts (tests/test_citus.py: the same schema). Released
#: scripts stay frozen; only a distributed database runs these.
CITUS_DIR = "citus"


def change_hash(change_id: str, deploy: str) -> str:
    """What yoyo records for an applied change: SHA-256 of its id and its deploy script as psql runs it."""
    return hashlib.sha256(f"{change_id}\n{deploy}".encode("utf-8")).hexdigest()


def _backend(dsn: str) -> Any:
    from yoyo import get_backend

    return get_backend(yoyo_url(dsn))


def _close(backend: Any) -> None:
    try:
        backend.connection.close()
    except Exception:  # pragma: no cover - closing is best effort
        pass


# --------------------------------------------------------------------------
# What the database must be before yoyo touches it
# --------------------------------------------------------------------------


def _version_text(server_version_num: int) -> str:
    major, rest = divmod(server_version_num, 10000)
    if major >= 10:  # 10 and later: major.minor
        return f"{major}.{rest}"
    return f"{server_version_num // 10000}.{server_version_num // 100 % 100}.{server_version_num % 100}"


def check_server_version(server_version_num: int) -> None:
    """Raise :class:`MigrationError` unless ``server_version_num`` is PostgreSQL 14 or newer."""
    if server_version_num < MIN_SERVER_VERSION_NUM:
        raise MigrationError(
            f"the server is PostgreSQL {_version_text(server_version_num)}; history-search needs "
            "PostgreSQL 14 or newer: upgrade the server or migrate a database on a newer one"
        )


def sqitch_deployed_changes(connection: psycopg.Connection[Any], project: str) -> tuple[str, int] | None:
    """``(registry schema, number of changes)`` of ``project`` deployed by sqitch, or None.

    sqitch's registry is a schema (``sqitch`` unless configured otherwise) with a
    ``changes`` table naming each deployed change and its project; any schema
    holding such a table is looked at.
    """
    from psycopg import sql

    registries = connection.execute(
        """SELECT c.relnamespace::regnamespace::text
             FROM pg_catalog.pg_class c
            WHERE c.relname = 'changes' AND c.relkind IN ('r', 'p')
              AND (SELECT pg_catalog.count(*) FROM pg_catalog.pg_attribute a
                    WHERE a.attrelid = c.oid AND a.attname IN ('change', 'project', 'change_id')
                      AND NOT a.attisdropped) = 3
            ORDER BY 1"""
    ).fetchall()
    for (schema,) in registries:
        readable = connection.execute(
            "SELECT pg_catalog.has_table_privilege(%s, 'SELECT')", (f"{schema}.changes",)
        ).fetchone()
        if readable is None or not readable[0]:
            continue
        counted = connection.execute(
            sql.SQL("SELECT pg_catalog.count(*) FROM {}.changes WHERE project = %s").format(sql.SQL(schema)),
            (project,),
        ).fetchone()
        if counted is not None and counted[0]:
            return str(schema), int(counted[0])
    return None


def _project(root: str | os.PathLike[str] | None) -> str:
    top = Path(root) if root is not None else sql_root()
    return read_plan(top / PLAN_FILE).project or "history-search"


#: The roles the plan's first change creates when they are missing (they are cluster-wide).
ROLES = ("history_owner", "history_runtime", "history_searcher", "history_auditor", "history_digest_verifier")

_OTHER_BUILD = (
    "it cannot be upgraded in place: restore a backup taken under a release, or migrate a new database and "
    "copy the data into it (docs/releases.md, \"Unknown states\")"
)


def yoyo_applied(connection: psycopg.Connection[Any]) -> list[tuple[str, str]] | None:
    """``(change id, recorded hash)`` of each change yoyo applied here; None when there is no yoyo registry.

    yoyo keeps its registry in the first schema of the migrating connection's
    ``search_path`` (``public`` unless changed): table ``_yoyo_migration``.
    """
    from psycopg import sql

    found = connection.execute("SELECT pg_catalog.to_regclass('_yoyo_migration')::text").fetchone()
    if found is None or found[0] is None:
        return None
    rows = connection.execute(
        sql.SQL("SELECT migration_id, migration_hash FROM {} ORDER BY applied_at_utc, migration_id").format(
            sql.SQL(found[0]))
    ).fetchall()
    return [(str(i), str(h)) for i, h in rows]


def check_deployed_changes(applied: list[tuple[str, str]], migrations: Any, version: str) -> None:
    """Raise :class:`MigrationError` unless ``applied`` is a prefix of the plan, each with the plan's content.

    A prefix (an interrupted ``migrate``, or an earlier release) is upgradable;
    anything else is a state no release made: a change the plan does not have,
    one deployed from other scripts (each development build before 0.1.0 is
    that), or a gap before a deployed change.
    """
    planned = {m.id: m.hash for m in migrations}
    order = [m.id for m in migrations]
    for change_id, recorded in applied:
        if change_id not in planned:
            raise MigrationError(
                f"this database holds change {change_id!r}, which history-search {version}'s plan does not have "
                f"(deployed by a development build or a newer release): {_OTHER_BUILD}"
            )
        if recorded != planned[change_id]:
            raise MigrationError(
                f"change {change_id!r} in this database was deployed from other scripts than history-search "
                f"{version} has for it (a development build, or a release whose scripts were edited): {_OTHER_BUILD}"
            )
    deployed = {change_id for change_id, _ in applied}
    gap = next((c for c in order[: len(deployed)] if c not in deployed), None)
    if gap is not None:
        later = next(c for c in order[order.index(gap):] if c in deployed)
        raise MigrationError(
            f"change {later!r} is deployed but {gap!r}, planned before it, is not (a hand-edited registry?): "
            f"{_OTHER_BUILD}"
        )


def check_migrating_role(connection: psycopg.Connection[Any], *, registry_exists: bool) -> None:
    """Raise :class:`MigrationError`, before anything changes, when the connected role cannot deploy the plan.

    A superuser can. Any other role needs: CREATEROLE while a role of
    :data:`ROLES` is missing; membership in ``history_owner`` once it exists
    (the changes run ``SET ROLE history_owner``; the first change grants it to
    the role that created it); CREATE on the database while schema ``history``
    is missing; CREATE on the schema yoyo's registry goes to, until it exists.
    """
    row = connection.execute(
        """SELECT r.rolname, r.rolsuper, r.rolcreaterole,
                  ARRAY(SELECT w FROM pg_catalog.unnest(%s::text[]) w
                         WHERE NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles o WHERE o.rolname = w)),
                  EXISTS (SELECT 1 FROM pg_catalog.pg_roles o WHERE o.rolname = 'history_owner')
                      AND NOT pg_catalog.pg_has_role('history_owner', 'MEMBER WITH ADMIN OPTION')
                      AND NOT pg_catalog.pg_has_role('history_owner', 'MEMBER'),
                  pg_catalog.to_regnamespace('history') IS NULL
                      AND NOT pg_catalog.has_database_privilege(pg_catalog.current_database(), 'CREATE'),
                  pg_catalog.current_schema(),
                  pg_catalog.current_schema() IS NULL
                      OR NOT pg_catalog.has_schema_privilege(pg_catalog.current_schema(), 'CREATE')
             FROM pg_catalog.pg_roles r WHERE r.rolname = current_user""",
        (list(ROLES),),
    ).fetchone()
    assert row is not None
    user, superuser, createrole, missing, not_owner_member, no_create_db, schema, no_create_schema = row
    if superuser:
        return
    if missing and not createrole:
        raise MigrationError(
            f"role {user} cannot create roles and {', '.join(missing)} do not exist yet: run the first migration "
            "as a superuser or a role with CREATEROLE (docs/releases.md, \"The migrating role\")"
        )
    if not_owner_member:
        raise MigrationError(
            f"role {user} is not a member of history_owner, which owns what the migration creates: "
            f"GRANT history_owner TO {user}, or migrate as a superuser"
        )
    if no_create_db:
        raise MigrationError(
            f"role {user} may not create schemas in this database: GRANT CREATE ON DATABASE ... TO {user}, "
            "or migrate as the database's owner"
        )
    if not registry_exists and no_create_schema:
        raise MigrationError(
            f"role {user} may not create yoyo's registry in schema {schema or '(none on search_path)'}: "
            f"GRANT CREATE ON SCHEMA {schema or 'public'} TO {user}, or migrate as the database's owner"
        )


_OWNER_ACCESS = """
SELECT r.rolname, r.rolsuper, o.oid IS NOT NULL,
       CASE WHEN o.oid IS NULL THEN true
            -- 16 and later separate SET from membership (a CREATEROLE creator holds ADMIN only)
            WHEN pg_catalog.current_setting('server_version_num')::int >= 160000
                THEN pg_catalog.pg_has_role(o.oid, 'SET')
            ELSE pg_catalog.pg_has_role(o.oid, 'MEMBER') END,
       o.oid IS NOT NULL AND pg_catalog.pg_has_role(o.oid, 'MEMBER WITH ADMIN OPTION')
  FROM pg_catalog.pg_roles r LEFT JOIN pg_catalog.pg_roles o ON o.rolname = 'history_owner'
 WHERE r.rolname = current_user
"""


def take_owner_role(dsn: str) -> None:
    """Let a migrating role that administers ``history_owner`` act as it (every change runs as the owner).

    On PostgreSQL 16 and later a role with CREATEROLE that created
    ``history_owner`` holds it WITH ADMIN OPTION but may not ``SET ROLE`` to it;
    the first change's own grant reads membership as 15 does, so ``migrate``
    grants the role to itself once it exists. A superuser needs nothing.
    """
    import psycopg
    from psycopg import sql

    with psycopg.connect(dsn, autocommit=True) as connection:
        row = connection.execute(_OWNER_ACCESS).fetchone()
        assert row is not None
        user, superuser, exists, can_set, admin = row
        if not superuser and exists and not can_set and admin:
            connection.execute(sql.SQL("GRANT history_owner TO {}").format(sql.Identifier(user)))


def citus_coordinator(connection: psycopg.Connection[Any]) -> bool:
    """Is this database a Citus coordinator (extension ``citus`` installed, this node the coordinator)?"""
    row = connection.execute(
        """SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_extension WHERE extname = 'citus')
                  AND pg_catalog.to_regproc('pg_catalog.citus_is_coordinator') IS NOT NULL""").fetchone()
    if row is None or not row[0]:
        return False
    found = connection.execute("SELECT pg_catalog.citus_is_coordinator()").fetchone()
    return bool(found and found[0])


def citus_distributed(dsn: str) -> bool:
    """Does Citus distribute this database's tables (a coordinator after ``history-search distribute``)?"""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as connection:
        if not citus_coordinator(connection):
            return False
        row = connection.execute(
            """SELECT EXISTS (SELECT FROM pg_catalog.pg_dist_partition p
                                JOIN pg_catalog.pg_class c ON c.oid = p.logicalrelid
                               WHERE c.relnamespace = pg_catalog.to_regnamespace('history'))""").fetchone()
        return bool(row and row[0])


def _citus_deferred_dsn(dsn: str) -> str:
    """``dsn``, on a Citus coordinator with new objects created on the coordinator only.

    Citus opens one connection per role to each node, so a change that creates
    a schema as the migrating role and then a function in it as
    ``history_owner`` would send the function over a connection that cannot see
    the schema (uncommitted on the other), and ``history_owner`` cannot log in
    anyway. With ``citus.create_object_propagation = deferred`` a new object
    stays on the coordinator until ``history-search distribute`` distributes
    the tables, which creates each with everything it depends on (schema,
    types, functions, roles) on every node. Changes to objects already
    distributed (a table's ``ALTER``) still propagate, but not a ``CREATE OR
    REPLACE`` of a distributed function: ``distribute``, which runs after every
    migrate there, sends those to the workers. Elsewhere ``dsn`` as is.
    """
    import psycopg
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    with psycopg.connect(dsn, autocommit=True) as connection:
        if not citus_coordinator(connection):
            return dsn
    options = conninfo_to_dict(dsn).get("options") or ""
    return make_conninfo(dsn, options=f"{options} -c citus.create_object_propagation=deferred".strip())


def deployed_release(connection: psycopg.Connection[Any]) -> str | None:
    """The release the database's schema is at (``history.schema_release()``), or None before any release."""
    found = connection.execute(
        "SELECT pg_catalog.to_regprocedure('history.schema_release()') IS NOT NULL").fetchone()
    if found is None or not found[0]:
        return None
    row = connection.execute("SELECT history.schema_release()").fetchone()
    return None if row is None else str(row[0])


def _check_database(dsn: str, project: str, migrations: Any) -> None:
    """PostgreSQL 14+; no sqitch registry holding this project's changes; yoyo's a prefix of the plan; a role that can deploy."""
    import psycopg

    from . import __version__

    with psycopg.connect(dsn, autocommit=True) as connection:
        check_server_version(connection.info.server_version)
        found = sqitch_deployed_changes(connection, project)
        if found:
            schema, count = found
            raise MigrationError(
                f"this database was deployed with sqitch ({count} changes of {project} in its registry "
                f"schema {schema}): keep using `sqitch deploy` on it, or `sqitch revert` it before "
                "`history-search migrate` (one database, one migration registry)"
            )
        applied = yoyo_applied(connection)
        if applied:
            check_deployed_changes(applied, migrations, __version__)
        else:
            exists = connection.execute("SELECT pg_catalog.to_regnamespace('history') IS NOT NULL").fetchone()
            if exists is not None and exists[0]:
                raise MigrationError(
                    "schema history exists but no migration registry says how it was deployed (restored from "
                    "`pg_dump -n history` without yoyo's public._yoyo_* tables, or made by hand): restore the "
                    "registry with it (docs/releases.md, \"Moving a database\"), or drop schema history first"
                )
        if len(applied or ()) < len(migrations):
            check_migrating_role(connection, registry_exists=applied is not None)


def pending(dsn: str, root: str | os.PathLike[str] | None = None) -> list[str]:
    """Names (yoyo ids) of the plan changes not yet applied to the database, in plan order.

    Raises :class:`MigrationError` as :func:`apply_migrations` does.
    """
    migrations = plan_migrations(root)
    _check_database(dsn, _project(root), migrations)
    backend = _backend(dsn)
    try:
        return [m.id for m in backend.to_apply(migrations)]
    finally:
        _close(backend)


def apply_migrations(
    dsn: str,
    root: str | os.PathLike[str] | None = None,
    *,
    on_applied: Callable[[str], None] | None = None,
) -> list[str]:
    """Apply every pending plan change; return their names (empty when up to date).

    ``on_applied(name)`` is called as each change commits (progress reporting).
    Holds yoyo's lock while it works, so concurrent callers apply each change once.
    Raises :class:`MigrationError`, before changing anything, on a server older
    than PostgreSQL 14 or a database deployed with sqitch.
    """
    migrations = plan_migrations(root)
    _check_database(dsn, _project(root), migrations)
    if citus_distributed(dsn):
        migrations = plan_migrations(root, distributed=True)
    backend = _backend(_citus_deferred_dsn(dsn))
    try:
        with backend.lock():
            todo = backend.to_apply(migrations)
            take_owner_role(dsn)
            for migration in todo:
                backend.apply_one(migration)  # its own transaction: committed when this returns
                if migration.change.name == "roles":  # it creates history_owner
                    take_owner_role(dsn)
                if on_applied is not None:
                    on_applied(migration.id)
            backend.run_post_apply(todo)
            return [m.id for m in todo]
    finally:
        _close(backend)
