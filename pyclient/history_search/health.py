"""``history-search check``: is a database as a release of history-search made it?

Read-only catalog queries, run as whoever connects (a superuser or a member of
``history_owner`` sees everything; anyone else is told what they could not
read). The checks, each reported as one line per problem:

* deployed: which registry (yoyo's, behind ``migrate``, or sqitch's) records the
  plan, whether its changes are a prefix of this release's plan with this
  release's content (:func:`migrations.check_deployed_changes`), what is pending;
* release: ``history.schema_release()`` against this package's version;
* roles: the five roles exist, none can log in or holds a superuser-like attribute;
* owners: ``history_owner`` owns the schema and everything in it;
* definer functions: exactly :data:`DEFINER_FUNCTIONS`, each with one signature
  (no overload left by an upgrade), pinning ``search_path`` and the other
  settings results depend on;
* grants: every privilege a role other than the owner holds in schema
  ``history`` is one the release grants (:data:`GRANTS`), and each of those is held;
* server functions: ``history_owner`` may execute what the release calls in
  ``pg_catalog`` beyond the ordinary (``pg_logical_emit_message``, which a
  deferred reveal's commit carries: docs/audit.md);
* on a Citus coordinator whose tables are distributed: what ``history-search
  distribute`` has yet to do after a ``migrate`` (a new table or routine, a
  routine whose workers still run the previous definition:
  :func:`distribute.outstanding`).

A restore without the roles, for instance, leaves the definer functions owned by
whoever restored them: ``check`` names each one.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from .migrations import (
    ROLES,
    MigrationError,
    _project,
    check_deployed_changes,
    plan_migrations,
    sqitch_deployed_changes,
    yoyo_applied,
)

__all__ = ["DEFINER_FUNCTIONS", "GRANTS", "Health", "check_database"]

_RUNTIME_FUNCTIONS = (
    "add_member", "begin_run", "check_delivery", "delete_message", "edit_message", "end_run", "erase_account",
    "link_identity",
    "post_message", "record_reply", "remove_member", "revoke_proof", "upsert_account", "upsert_conversation",
)

#: What the auditor's views read on Citus (``history-search distribute`` puts them behind the views there).
_AUDITOR_FUNCTIONS = ("_search_audit_rows", "_search_audit_messages_rows", "_status_rows")

#: The functions that run as their owner (the SQL surface behind the search procedure).
DEFINER_FUNCTIONS = frozenset((*_RUNTIME_FUNCTIONS, "_search_history", "_search_reveal", "run_status",
                               "verify_query_digest", *_AUDITOR_FUNCTIONS))

#: (object, privilege, grantee) for each privilege the release grants in schema history to a role other
#: than its owner. Objects are ``schema``, ``function NAME`` (any signature) or ``relation NAME``.
GRANTS = frozenset(
    [("schema", "USAGE", role) for role in ROLES if role != "history_owner"]
    + [(f"function {name}", "EXECUTE", "history_runtime") for name in _RUNTIME_FUNCTIONS]
    + [(f"function {name}", "EXECUTE", role)
       for name in ("_search_history", "_search_reveal", "search_history", "run_status")
       for role in ("history_runtime", "history_searcher")]
    + [("function verify_query_digest", "EXECUTE", "history_digest_verifier")]
    + [(f"relation {view}", "SELECT", "history_auditor") for view in ("search_audit", "search_audit_messages", "status")]
    # history.status shows the release: a function a view calls is checked against its reader.
    + [("function schema_release", "EXECUTE", "history_auditor")]
    + [(f"function {name}", "EXECUTE", "history_auditor") for name in _AUDITOR_FUNCTIONS]
)

#: The settings every definer function pins (results never depend on the caller's session).
PINNED_SETTINGS = (
    "search_path=pg_catalog, history, pg_temp", "extra_float_digits=1", "DateStyle=ISO, MDY",
    "IntervalStyle=postgres", "TimeZone=UTC", "standard_conforming_strings=on",
)


@dataclass
class Health:
    tool_version: str
    deployed: bool = False
    registry: str | None = None  # "yoyo" (history-search migrate) or "sqitch"
    release: str | None = None
    deployed_changes: int = 0
    pending: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.deployed and not self.pending and not self.problems

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "ok": self.ok}

    def lines(self) -> list[str]:
        registry = {"yoyo": "by history-search migrate", "sqitch": "by sqitch"}.get(self.registry or "", "")
        out = [f"deployed: {'yes' if self.deployed else 'no'}"
               + (f", {self.deployed_changes} changes {registry}" if self.deployed else "")]
        out.append(f"release: {self.release or 'none'} (this history-search: {self.tool_version})")
        out.append("pending: " + (", ".join(self.pending) if self.pending else "none"))
        out += [f"problem: {p}" for p in self.problems]
        out.append("ok" if self.ok else "not ok")
        return out


def _registry_state(connection: Any, health: Health, root: Any) -> None:
    """Fill ``deployed``, ``registry``, ``deployed_changes`` and ``pending`` from yoyo's or sqitch's registry."""
    from psycopg import sql

    migrations = plan_migrations(root)
    plan_ids = [m.id for m in migrations]
    applied = yoyo_applied(connection)
    sqitch = sqitch_deployed_changes(connection, _project(root))
    if applied:
        health.registry, health.deployed, health.deployed_changes = "yoyo", True, len(applied)
        try:
            check_deployed_changes(applied, migrations, health.tool_version)
        except MigrationError as exc:
            health.problems.append(str(exc))
            return
        done = {change_id for change_id, _ in applied}
        health.pending = [c for c in plan_ids if c not in done]
    elif sqitch:
        schema, count = sqitch
        health.registry, health.deployed, health.deployed_changes = "sqitch", True, count
        names = [m.change.name for m in migrations]
        deployed = [str(r[0]) for r in connection.execute(
            sql.SQL("SELECT change FROM {}.changes WHERE project = %s ORDER BY committed_at, change").format(
                sql.SQL(schema)), (_project(root),)).fetchall()]
        if deployed != names[: len(deployed)]:
            health.problems.append(f"sqitch's registry ({schema}) holds changes that are not a prefix of "
                                   f"history-search {health.tool_version}'s plan (a development build?)")
            return
        health.pending = plan_ids[len(deployed):]
    elif connection.execute("SELECT pg_catalog.to_regnamespace('history') IS NOT NULL").fetchone()[0]:
        health.deployed = True
        health.problems.append("schema history exists but neither yoyo's nor sqitch's registry records it "
                               "(restored without the registry, or made by hand)")


def _release(connection: Any, health: Health) -> None:
    row = connection.execute(
        """SELECT p.oid IS NOT NULL, p.oid IS NOT NULL AND pg_catalog.has_function_privilege(p.oid, 'EXECUTE')
             FROM (SELECT pg_catalog.to_regprocedure('history.schema_release()') AS oid) p""").fetchone()
    present, readable = row
    if not present:
        health.problems.append("history.schema_release() is missing: the schema is at no release")
    elif not readable:
        health.problems.append(f"{connection.info.user} cannot read the release: run check as a superuser or a "
                               "member of history_owner")
    else:
        health.release = str(connection.execute("SELECT history.schema_release()").fetchone()[0])
        if not health.pending and health.release != health.tool_version:
            health.problems.append(f"the schema is at release {health.release}, and nothing is pending for "
                                   f"history-search {health.tool_version}: the registry and the schema disagree")


def _roles(connection: Any, health: Health) -> None:
    found = {r[0]: r[1:] for r in connection.execute(
        """SELECT rolname, rolcanlogin, rolsuper OR rolcreaterole OR rolcreatedb OR rolbypassrls OR rolreplication
             FROM pg_catalog.pg_roles WHERE rolname = ANY (%s)""", (list(ROLES),)).fetchall()}
    for role in ROLES:
        if role not in found:
            health.problems.append(f"role {role} does not exist (restored without the roles? create them and run "
                                   "`history-search migrate`, or restore them with pg_dumpall --roles-only)")
            continue
        login, powerful = found[role]
        if login:
            health.problems.append(f"role {role} can log in: the release makes it NOLOGIN (ALTER ROLE {role} NOLOGIN)")
        if powerful:
            health.problems.append(f"role {role} has SUPERUSER, CREATEROLE, CREATEDB, BYPASSRLS or REPLICATION")


_OWNED = """
SELECT 'schema history', n.nspowner::regrole::text FROM pg_catalog.pg_namespace n WHERE n.nspname = 'history'
UNION ALL
SELECT CASE c.relkind WHEN 'v' THEN 'view ' WHEN 'S' THEN 'sequence ' WHEN 'c' THEN 'type ' ELSE 'table ' END
       || c.oid::regclass::text, c.relowner::regrole::text
  FROM pg_catalog.pg_class c
 WHERE c.relnamespace = 'history'::regnamespace AND c.relkind NOT IN ('i', 'I')
UNION ALL
SELECT 'function ' || p.oid::regprocedure::text, p.proowner::regrole::text
  FROM pg_catalog.pg_proc p
 WHERE p.pronamespace = 'history'::regnamespace
   AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_depend d
                    WHERE d.classid = 'pg_catalog.pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')
UNION ALL
SELECT 'type ' || t.oid::regtype::text, t.typowner::regrole::text
  FROM pg_catalog.pg_type t
 WHERE t.typnamespace = 'history'::regnamespace AND t.typrelid = 0 AND t.typelem = 0
ORDER BY 1
"""

_DEFINERS = """
SELECT p.proname::text, p.oid::regprocedure::text, p.prosecdef, coalesce(p.proconfig, '{}')
  FROM pg_catalog.pg_proc p WHERE p.pronamespace = 'history'::regnamespace
"""

# Every privilege held in schema history by a role other than the object's owner (0 = PUBLIC).
_GRANTED = """
SELECT 'schema', a.privilege_type, a.grantee
  FROM pg_catalog.pg_namespace n, pg_catalog.aclexplode(n.nspacl) a
 WHERE n.nspname = 'history' AND a.grantee <> n.nspowner
UNION
SELECT 'function ' || p.proname, a.privilege_type, a.grantee
  FROM pg_catalog.pg_proc p,
       pg_catalog.aclexplode(coalesce(p.proacl, pg_catalog.acldefault('f', p.proowner))) a
 WHERE p.pronamespace = 'history'::regnamespace AND a.grantee <> p.proowner
UNION
SELECT 'relation ' || c.relname, a.privilege_type, a.grantee
  FROM pg_catalog.pg_class c,
       pg_catalog.aclexplode(coalesce(c.relacl, pg_catalog.acldefault(
           CASE c.relkind WHEN 'S' THEN 's' ELSE 'r' END::"char", c.relowner))) a
 WHERE c.relnamespace = 'history'::regnamespace AND c.relkind NOT IN ('i', 'I', 'c') AND a.grantee <> c.relowner
"""


def _owners_definers_grants(connection: Any, health: Health) -> None:
    for what, owner in connection.execute(_OWNED).fetchall():
        if owner != "history_owner":
            health.problems.append(f"{what} is owned by {owner}, not history_owner "
                                   f"(ALTER ... OWNER TO history_owner)")
    definers = set()
    signatures: dict[str, list[str]] = {}
    for name, signature, definer, config in connection.execute(_DEFINERS).fetchall():
        if name in DEFINER_FUNCTIONS:
            signatures.setdefault(name, []).append(signature)
        if definer:
            definers.add(name)
            if name not in DEFINER_FUNCTIONS:
                health.problems.append(f"function {signature} is SECURITY DEFINER; the release makes it run as "
                                       "its caller")
                continue
            unpinned = [s.split("=", 1)[0] for s in PINNED_SETTINGS if s not in config]
            if unpinned:
                health.problems.append(f"SECURITY DEFINER function {signature} does not pin "
                                       + ", ".join(unpinned) + " as the release does")
    # A signature that gained a parameter (p_tenant) replaces the old one: an old
    # overload left beside it makes every call that omits the new parameter ambiguous.
    for name, found in sorted(signatures.items()):
        if len(found) > 1:
            health.problems.append(f"function history.{name} has {len(found)} signatures ("
                                   + "; ".join(sorted(found)) + "); the release has one: drop the others")
    for name in sorted(DEFINER_FUNCTIONS - definers):
        health.problems.append(f"function history.{name} is not SECURITY DEFINER (or missing)")
    granted = {(obj, priv, _role_name(connection, grantee))
               for obj, priv, grantee in connection.execute(_GRANTED).fetchall()}
    for obj, priv, role in sorted(granted - GRANTS):
        health.problems.append(f"{role} holds {priv} on {obj}, which the release does not grant "
                               f"(REVOKE {priv} ON ... FROM {role})")
    for obj, priv, role in sorted(GRANTS - granted):
        health.problems.append(f"{role} lacks {priv} on {obj}, which the release grants")


def _server_functions(connection: Any, health: Health) -> None:
    # The text form; PostgreSQL 17 added a fourth parameter (flush), so the signature is read here.
    for (signature,) in connection.execute(
            """SELECT p.oid::regprocedure::text FROM pg_catalog.pg_proc p
                WHERE p.proname = 'pg_logical_emit_message' AND p.pronamespace = 'pg_catalog'::regnamespace
                  AND p.proargtypes[2] = 'text'::regtype
                  AND NOT pg_catalog.has_function_privilege('history_owner', p.oid, 'EXECUTE')""").fetchall():
        health.problems.append(f"history_owner may not execute {signature}: a search whose reveal must wait for "
                               f"other sessions' WAL fails (GRANT EXECUTE ON FUNCTION {signature} TO "
                               "history_owner; docs/audit.md)")


def _citus_layout(connection: Any, health: Health) -> None:
    from .distribute import outstanding
    from .migrations import citus_coordinator

    if not citus_coordinator(connection):
        return
    for line in outstanding(connection):
        health.problems.append(f"{line}: run history-search distribute (after every migrate on Citus)")


def _role_name(connection: Any, oid: int) -> str:
    if oid == 0:
        return "PUBLIC"
    row = connection.execute("SELECT %s::oid::regrole::text", (oid,)).fetchone()
    return str(row[0])


def check_database(dsn: str, root: Any = None) -> Health:
    """What ``history-search check`` reports for the database at ``dsn``."""
    import psycopg

    from . import __version__

    health = Health(tool_version=__version__)
    with psycopg.connect(dsn, autocommit=True) as connection:
        connection.read_only = True
        _registry_state(connection, health, root)
        if not health.deployed:
            return health
        _release(connection, health)
        _roles(connection, health)
        _owners_definers_grants(connection, health)
        _server_functions(connection, health)
        _citus_layout(connection, health)
    return health
