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
    "PlanChange",
    "PlanError",
    "Plan",
    "apply_migrations",
    "check_server_version",
    "load_script",
    "pending",
    "plan_migrations",
    "read_plan",
    "sqitch_deployed_changes",
    "sql_root",
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
    the earlier instance's scripts are ``<name>@<first tag after it>.sql``).
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

    def first_tag_after(index: int) -> str | None:
        for before, tag in tag_positions:
            if before > index:
                return tag
        return None

    ids: list[str] = []
    scripts: list[str] = []
    for index, (lineno, m) in enumerate(raw):
        name = m["name"]
        occ = occurrences[name]
        k = occ.index(index)
        ids.append(name if k == 0 else f"{name}@rework{k}")
        if k + 1 < len(occ):  # reworked later: this instance's scripts carry a tag
            tag = first_tag_after(index)
            if tag is None or tags[tag] > occ[k + 1]:
                raise PlanError(
                    f"{path}:{lineno}: change {name} is planned again without a tag in between"
                )
            scripts.append(f"{name}@{tag}")
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


def load_script(path: str | os.PathLike[str], *, _stack: tuple[Path, ...] = ()) -> str:
    """Read a sqitch script as yoyo must run it.

    Removes top-level ``BEGIN;``/``COMMIT;``/``ROLLBACK;`` lines and inlines
    ``\\ir`` / ``\\include_relative`` files. Any other psql meta-command is an
    error, since only psql could run it.
    """
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
            if _TX_LINE_RE.match(line):
                # Keep the line (as a comment) so error positions still match the file.
                out.append("-- " + line.lstrip().rstrip("\n") + "  (removed for yoyo)\n")
                continue
            inc = _INCLUDE_RE.match(line.rstrip("\n"))
            if inc:
                target = inc["path"].strip("'")
                included = load_script(path.parent / target, _stack=(*_stack, path))
                out.append(f"-- begin \\ir {target}\n")
                out.append(included if included.endswith("\n") else included + "\n")
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


def plan_migrations(root: str | os.PathLike[str] | None = None) -> Any:
    """One yoyo migration per change of the plan under ``root`` (default: :func:`sql_root`)."""
    from yoyo.migrations import Migration, MigrationList, StepCollector

    root = Path(root) if root is not None else sql_root()
    plan = read_plan(root / PLAN_FILE)
    top = root / TOP_DIR

    class PlanMigration(Migration):  # type: ignore[misc]  # yoyo ships no type information
        """A migration whose steps come from a sqitch change rather than a yoyo file."""

        def __init__(self, change: PlanChange, deploy: str, revert: str, verify: str):
            super().__init__(change.id, str(top / "deploy" / f"{change.script}.sql"), str(top))
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
            scripts.append(load_script(script))
        migration = PlanMigration(change, *scripts)
        deps = {by_id[r] for r in change.requires}
        if previous is not None:
            deps.add(previous)
        migration._plan_depends = deps
        by_id[change.id] = migration
        migrations.append(migration)
        previous = migration
    return MigrationList(migrations)


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


def _check_database(dsn: str, project: str) -> None:
    """PostgreSQL 14+, and no sqitch registry holding this project's changes."""
    import psycopg

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


def pending(dsn: str, root: str | os.PathLike[str] | None = None) -> list[str]:
    """Names (yoyo ids) of the plan changes not yet applied to the database, in plan order.

    Raises :class:`MigrationError` as :func:`apply_migrations` does.
    """
    migrations = plan_migrations(root)
    _check_database(dsn, _project(root))
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
    _check_database(dsn, _project(root))
    backend = _backend(dsn)
    try:
        with backend.lock():
            todo = backend.to_apply(migrations)
            for migration in todo:
                backend.apply_one(migration)  # its own transaction: committed when this returns
                if on_applied is not None:
                    on_applied(migration.id)
            backend.run_post_apply(todo)
            return [m.id for m in todo]
    finally:
        _close(backend)
