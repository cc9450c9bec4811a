"""``history-search distribute``: lay a migrated database out on Citus.

Run on the coordinator, as a superuser, after ``history-search migrate``. The
layout is derived from the catalog, not from a list:

* a table of schema ``history`` whose primary key is ``tenant_key`` and more
  (a row of one tenant) is hash-distributed by ``tenant_key``, all co-located
  with ``history.conversations``, so every row of one tenant is on one node
  and joins and foreign keys on ``(…, tenant_key)`` stay on one shard;
* every other table of the schema (tenants, run tokens, search settings,
  digest keys, locks …) becomes a reference table: a copy on every node;
* every function and procedure of the schema is propagated to every node (the
  statements Citus pushes down to a shard call them there). The functions
  named ``…_in_tenant`` whose first argument is ``p_tenant integer`` (the
  search and its reveal) are also *delegated* by it, with
  ``force_delegation``: a call naming the tenant as a constant runs on the
  worker that holds the tenant, where each of its statements is local (and
  must name that tenant). Every other call runs on the coordinator and its
  statements go to the shard(s) they name;
* every view ``history.V`` that has a function ``history._V_rows()`` (the
  auditor's ``search_audit``, ``search_audit_messages`` and ``status``) is
  redefined as ``SELECT * FROM history._V_rows()``, same columns. Citus reads a
  view's shards over connections opened as the *session's* role, which an
  auditor's login cannot pass (and must not: the shards hold the text); the
  function is SECURITY DEFINER, so its reads go as the owner. One node keeps
  the view's own query, whose filters reach the tables' indexes. A migrate that
  re-creates such a view puts the one-node query back: run distribute again.

Citus refuses to distribute a table that has a foreign key to a table that is
not distributed yet, and turns a local table that references a reference table
into a "Citus local table", which it cannot distribute afterwards when it has
an identity column (all of ours do). So the foreign keys of the schema are
dropped, the tables distributed, and the same constraints (same names, same
definitions) added back — all in one transaction: it either lays out the whole
schema or changes nothing.

``history_owner`` owns the tables and the SECURITY DEFINER functions, and Citus
reaches the workers' shards over connections it opens as the current role: the
owner must be able to log in *on the workers* (it stays NOLOGIN on the
coordinator, where clients connect). ``distribute`` grants that, on the workers
only, and the workers' ``pg_hba.conf`` must admit it only from the other nodes
(docs/scale-out.md, "The owner role on Citus").

After a ``migrate`` of a distributed database (docs/scale-out.md, "Upgrading a
distributed database"): a new table is laid out by the same rule (one that
Citus made a "Citus local table" for its foreign key to a reference table
becomes a reference table, its comments kept), a new routine is distributed,
and a routine the migrate changed is sent again to the workers, which Citus
did not do (a migration runs in a transaction with new objects deferred): each
routine's definition is compared on every node, and the coordinator's sent
where a worker's differs.

Idempotent: when every table and function is already where the rule puts it,
nothing changes and the report says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["DistributeError", "Layout", "distribute", "outstanding", "planned_layout"]

SCHEMA = "history"
KEY = "tenant_key"


class DistributeError(RuntimeError):
    """The database cannot be distributed as it is; one line that says why and what to do."""


@dataclass
class Layout:
    """What ``distribute`` did (or found done)."""

    distributed: list[str] = field(default_factory=list)  # hash-distributed by tenant_key
    reference: list[str] = field(default_factory=list)
    functions: list[str] = field(default_factory=list)
    #: the views that read through their ``_V_rows()`` function
    views: list[str] = field(default_factory=list)
    #: what this run changed: tables and functions it distributed, views it redefined
    changed: list[str] = field(default_factory=list)
    workers: list[str] = field(default_factory=list)

    @property
    def up_to_date(self) -> bool:
        return not self.changed

    def as_dict(self) -> dict[str, Any]:
        return {"distributed": self.distributed, "reference": self.reference, "functions": self.functions,
                "views": self.views,
                "changed": self.changed, "workers": self.workers, "up_to_date": self.up_to_date}


# Distributed: the primary key holds tenant_key and more (a tenant's row). Not the tenants table
# (tenant_key alone) nor a lookup keyed by something else (run_tokens: a token names no tenant).
_TABLES = """
SELECT c.oid::regclass::text,
       EXISTS (SELECT 1 FROM pg_catalog.pg_constraint k
                JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum = ANY (k.conkey)
               WHERE k.conrelid = c.oid AND k.contype = 'p' AND pg_catalog.array_length(k.conkey, 1) > 1
                 AND a.attname = %(key)s)
  FROM pg_catalog.pg_class c
 WHERE c.relnamespace = %(schema)s::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relispartition
 ORDER BY 1
"""

_PLACED = """
SELECT p.logicalrelid::regclass::text,
       CASE WHEN p.partmethod = 'h' THEN 'distributed'
            WHEN p.partmethod = 'n' AND p.repmodel = 't' THEN 'reference'
            ELSE 'Citus local' END,
       p.colocationid
  FROM pg_catalog.pg_dist_partition p
  JOIN pg_catalog.pg_class c ON c.oid = p.logicalrelid
 WHERE c.relnamespace = %(schema)s::regnamespace
"""

_FOREIGN_KEYS = """
SELECT k.conrelid::regclass::text, k.conname, pg_catalog.pg_get_constraintdef(k.oid), k.confrelid::regclass::text
  FROM pg_catalog.pg_constraint k JOIN pg_catalog.pg_class c ON c.oid = k.conrelid
 WHERE k.contype = 'f' AND c.relnamespace = %(schema)s::regnamespace
 ORDER BY 1, 2
"""

_CARRIER = "_citus_type_carrier"

_TYPES = """
SELECT t.oid::regtype::text
  FROM pg_catalog.pg_type t LEFT JOIN pg_catalog.pg_class c ON c.oid = t.typrelid
 WHERE t.typnamespace = %(schema)s::regnamespace AND t.typtype IN ('c', 'e', 'd')
   AND (t.typrelid = 0 OR c.relkind = 'c')
   AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_dist_object d
                    WHERE d.classid = 'pg_catalog.pg_type'::regclass AND d.objid = t.oid)
 ORDER BY 1
"""

#: Functions delegated to the tenant's worker: named ``…_in_tenant``, first argument ``p_tenant integer``.
DELEGATED_SUFFIX, DELEGATED_ARGUMENT = "_in_tenant", "p_tenant"

# (signature, done, delegated): done when on every node and, if delegated, delegated by its first argument.
_FUNCTIONS = """
SELECT f.signature,
       EXISTS (SELECT 1 FROM pg_catalog.pg_dist_object d
                WHERE d.classid = 'pg_catalog.pg_proc'::regclass AND d.objid = f.oid
                  AND (NOT f.delegated OR (d.distribution_argument_index = 0 AND d.force_delegation))),
       f.delegated
  FROM (SELECT p.oid, p.oid::regprocedure::text AS signature,
               p.proname LIKE '%%' || %(suffix)s AND p.proargnames[1] = %(argument)s
               AND p.proargtypes[0] = 'pg_catalog.int4'::regtype AS delegated
          FROM pg_catalog.pg_proc p
         WHERE p.pronamespace = %(schema)s::regnamespace AND p.prokind IN ('f', 'p')) f
 ORDER BY 1
"""

# Each node's definition of each routine of the schema (an md5 of pg_get_functiondef), read by the same
# command on every node (so with the same search_path), and which node is the coordinator.
_DEFINITIONS = """
SELECT n.groupid = 0, r.success, r.result
  FROM pg_catalog.run_command_on_all_nodes($cmd$
SELECT pg_catalog.json_object_agg(p.oid::pg_catalog.regprocedure::text,
                                  pg_catalog.md5(pg_catalog.pg_get_functiondef(p.oid)))
  FROM pg_catalog.pg_proc p
 WHERE p.pronamespace = 'history'::pg_catalog.regnamespace AND p.prokind IN ('f', 'p')$cmd$) r
  JOIN pg_catalog.pg_dist_node n ON n.nodeid = r.nodeid
"""

# The statements that set again the comments of a table and of its columns.
_COMMENTS = """
SELECT pg_catalog.format('COMMENT ON TABLE %%s IS %%L', c.oid::regclass, d.description)
  FROM pg_catalog.pg_class c JOIN pg_catalog.pg_description d
    ON d.classoid = 'pg_catalog.pg_class'::regclass AND d.objoid = c.oid AND d.objsubid = 0
 WHERE c.oid = %(table)s::regclass
UNION ALL
SELECT pg_catalog.format('COMMENT ON COLUMN %%s.%%I IS %%L', c.oid::regclass, a.attname, d.description)
  FROM pg_catalog.pg_class c
  JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid
  JOIN pg_catalog.pg_description d
    ON d.classoid = 'pg_catalog.pg_class'::regclass AND d.objoid = c.oid AND d.objsubid = a.attnum
 WHERE c.oid = %(table)s::regclass
"""

# Each view V of the schema with a function _V_rows() of no arguments, and whether V reads it already.
_FUNCTION_VIEWS = """
SELECT v.oid::regclass::text, f.oid::regprocedure::text,
       EXISTS (SELECT 1 FROM pg_catalog.pg_rewrite r
                 JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_rewrite'::regclass AND d.objid = r.oid
                WHERE r.ev_class = v.oid AND d.refclassid = 'pg_catalog.pg_proc'::regclass AND d.refobjid = f.oid)
  FROM pg_catalog.pg_class v
  JOIN pg_catalog.pg_proc f ON f.pronamespace = v.relnamespace AND f.pronargs = 0
                           AND f.proname = '_' || v.relname || '_rows'
 WHERE v.relnamespace = %(schema)s::regnamespace AND v.relkind = 'v'
 ORDER BY 1
"""

# A view's columns in order, each with its collation where it is not its type's.
_VIEW_COLUMNS = """
SELECT a.attname::text, CASE WHEN a.attcollation <> t.typcollation THEN a.attcollation::regcollation::text END
  FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_type t ON t.oid = a.atttypid
 WHERE a.attrelid = %s::regclass AND a.attnum > 0 AND NOT a.attisdropped
 ORDER BY a.attnum
"""


def _coordinator_check(connection: Any) -> list[str]:
    """The workers' ``host:port``; DistributeError unless this is a migrated Citus coordinator with workers."""
    row = connection.execute(
        "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_extension WHERE extname = 'citus')").fetchone()
    if not row or not row[0]:
        raise DistributeError(
            "this database is not a Citus coordinator (no citus extension): run distribute on the coordinator, "
            "in a database where CREATE EXTENSION citus has run on every node")
    row = connection.execute("SELECT pg_catalog.citus_is_coordinator()").fetchone()
    if not row or not row[0]:
        raise DistributeError("this database is a Citus worker, not the coordinator: run distribute on the coordinator")
    row = connection.execute("SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user").fetchone()
    if not row or not row[0]:
        raise DistributeError("distribute must run as a superuser (it distributes tables owned by history_owner "
                              "and lets that role log in on the workers)")
    row = connection.execute(
        "SELECT pg_catalog.to_regprocedure('history.schema_release()') IS NOT NULL").fetchone()
    if not row or not row[0]:
        raise DistributeError("schema history is not deployed here: run `history-search migrate` on the coordinator "
                              "first")
    workers = [f"{h}:{p}" for h, p in connection.execute(
        "SELECT node_name, node_port FROM pg_catalog.citus_get_active_worker_nodes() ORDER BY 1, 2").fetchall()]
    if not workers:
        raise DistributeError("the coordinator has no active worker: add them first "
                              "(SELECT citus_add_node('host', port) for each)")
    return workers


def planned_layout(connection: Any) -> tuple[list[str], list[str]]:
    """(distributed, reference): the tables of schema history by the rule, each list sorted."""
    rows = connection.execute(_TABLES, {"schema": SCHEMA, "key": KEY}).fetchall()
    return [t for t, d in rows if d], [t for t, d in rows if not d]


def _functions(connection: Any) -> list[tuple[str, bool, bool]]:
    """(signature, done, delegated) of every routine of the schema."""
    rows = connection.execute(_FUNCTIONS, {"schema": SCHEMA, "suffix": DELEGATED_SUFFIX,
                                           "argument": DELEGATED_ARGUMENT}).fetchall()
    return [(str(f), bool(done), bool(delegated)) for f, done, delegated in rows]


def _definitions(connection: Any) -> tuple[dict[str, str], list[dict[str, str]]]:
    """(the coordinator's, each worker's): an md5 of each routine's definition, by signature."""
    import json

    coordinator: dict[str, str] = {}
    workers: list[dict[str, str]] = []
    for is_coordinator, ok, result in connection.execute(_DEFINITIONS).fetchall():
        if not ok:
            raise DistributeError(f"could not read the functions' definitions on a node: {result}")
        found = json.loads(result) if result else {}
        if is_coordinator:
            coordinator = found
        else:
            workers.append(found)
    return coordinator, workers


def _differing(coordinator: dict[str, str], workers: list[dict[str, str]]) -> list[str]:
    """The routines some worker has with a definition other than the coordinator's, sorted."""
    return sorted(f for f, digest in coordinator.items() if any(f in w and w[f] != digest for w in workers))


def _stale_on_workers(connection: Any) -> list[str]:
    """Bring every worker's copy of each routine up to the coordinator's definition; the ones it replaced.

    A migrate re-creates a changed function on the coordinator only: Citus does not send a CREATE OR
    REPLACE of a distributed function to the workers from inside a transaction (every migration runs
    in one) when new objects are deferred (as migrate defers them). The workers would go on running
    the previous release's body. The same statement, alone and outside a transaction, Citus sends to
    every worker, with the owner and the grants.
    """
    stale = _differing(*_definitions(connection))
    for function in stale:
        row = connection.execute("SELECT pg_catalog.pg_get_functiondef(%s::regprocedure)", (function,)).fetchone()
        connection.execute(row[0])
    if stale:
        left = _differing(*_definitions(connection))
        if left:
            raise DistributeError(f"the workers still run another definition of {left[0]} after it was sent "
                                  "to them")
    return stale


def outstanding(connection: Any) -> list[str]:
    """What ``distribute`` would do on this coordinator, whose tables it has laid out before (read only):
    a table not laid out, a routine not on the workers or with another definition there, a view not
    reading its function. Empty when there is nothing, or when no table of the schema is distributed."""
    placed = {t: kind for t, kind, _ in connection.execute(_PLACED, {"schema": SCHEMA}).fetchall()}
    if not placed:
        return []
    distributed, reference = planned_layout(connection)
    todo = [f"table {t} is not {'distributed' if t in distributed else 'a reference table'}"
            for t in distributed + reference
            if placed.get(t) != ("distributed" if t in distributed else "reference")]
    todo += [f"function {f} is not on the workers" + (" (delegated)" if delegated else "")
             for f, done, delegated in _functions(connection) if not done]
    todo += [f"function {f} has another definition on a worker" for f in _differing(*_definitions(connection))]
    todo += [f"view {view} does not read {function}"
             for view, function, done in connection.execute(_FUNCTION_VIEWS, {"schema": SCHEMA}).fetchall()
             if not done]
    return todo


def _owner_logs_in_on_workers(connection: Any) -> bool:
    """Let history_owner log in on every worker (not on the coordinator); True if a worker changed."""
    rows = connection.execute(
        """SELECT success, result FROM pg_catalog.run_command_on_workers(
               $$SELECT rolcanlogin FROM pg_catalog.pg_roles WHERE rolname = 'history_owner'$$)""").fetchall()
    if all(ok and result == "t" for ok, result in rows):
        return False
    # Without propagation the change stays on each worker (Citus would otherwise send it to every node).
    for ok, result in connection.execute(
            """SELECT success, result FROM pg_catalog.run_command_on_workers(
                   'SET citus.enable_ddl_propagation = off; ALTER ROLE history_owner LOGIN', parallel => false)"""
    ).fetchall():
        if not ok:
            raise DistributeError(f"could not let history_owner log in on a worker: {result}")
    return True


def distribute(dsn: str) -> Layout:
    """Lay schema history out on the Citus coordinator at ``dsn``; what it did (see the module's docstring)."""
    import psycopg
    from psycopg import sql

    with psycopg.connect(dsn, autocommit=True) as connection:
        layout = Layout(workers=_coordinator_check(connection))
        distributed, reference = planned_layout(connection)
        layout.distributed, layout.reference = distributed, reference
        if not distributed:
            raise DistributeError(f"no table of schema {SCHEMA} has a {KEY} column: nothing to distribute by")

        placed = {t: (kind, colocation) for t, kind, colocation in
                  connection.execute(_PLACED, {"schema": SCHEMA}).fetchall()}
        # A table that a migrate created on a distributed database, with a foreign key to a reference
        # table, is one Citus made a Citus local table: it becomes a reference table like any other.
        placed = {t: p for t, p in placed.items() if not (p[0] == "Citus local" and t in reference)}
        wrong = sorted(
            f"{t} is already a {placed[t][0]} table" for t in distributed + reference
            if t in placed and placed[t][0] != ("distributed" if t in distributed else "reference"))
        if wrong:
            raise DistributeError(
                "; ".join(wrong) + f" (the rule: a table with {KEY} is distributed by it, every other one is a "
                "reference table): undo that by hand (undistribute_table) and run distribute again")
        # Co-located with the conversations (what every other distributed row hangs off), when there are any.
        anchor = f"{SCHEMA}.conversations" if f"{SCHEMA}.conversations" in distributed else distributed[0]
        colocations = {placed[t][1] for t in distributed if t in placed}
        if len(colocations) > 1:
            raise DistributeError(f"the distributed tables of schema {SCHEMA} are not all co-located "
                                  f"(co-location groups {sorted(colocations)}): undistribute them and run again")
        todo_tables = [t for t in reference + distributed if t not in placed]

        with connection.transaction():
            if todo_tables:
                # Sequential: the same transaction creates shards and then foreign keys between them.
                connection.execute("SET LOCAL citus.multi_shard_modify_mode = 'sequential'")
                keys = connection.execute(_FOREIGN_KEYS, {"schema": SCHEMA}).fetchall()
                for table, name, _definition, referenced in keys:
                    if table in reference and referenced in distributed:
                        raise DistributeError(
                            f"reference table {table} has a foreign key ({name}) to {referenced}, which has {KEY} "
                            f"and is distributed: Citus allows no reference table to refer to a distributed one; "
                            f"give {table} a {KEY} too")
                # A table that Citus made a Citus local table for its foreign key to a reference table (one a
                # migrate created on a distributed database) is re-created twice below, without its comments:
                # when the key is dropped (Citus undistributes it) and when it becomes a reference table.
                comments = [c for t in todo_tables for (c,) in connection.execute(_COMMENTS, {"table": t}).fetchall()]
                for table, name, _definition, _referenced in keys:
                    connection.execute(sql.SQL("ALTER TABLE {} DROP CONSTRAINT {}").format(
                        sql.SQL(table), sql.Identifier(name)))
                # Citus copies a table's rows into its shards and keeps them in the coordinator's table too.
                loaded = [t for t in todo_tables
                          if (connection.execute(sql.SQL("SELECT EXISTS (SELECT FROM {})").format(sql.SQL(t))
                                                 ).fetchone() or (False,))[0]]
                for table in reference:
                    if table not in placed:
                        connection.execute("SELECT pg_catalog.create_reference_table(%s)", (table,))
                        layout.changed.append(f"reference table {table}")
                for table in sorted(distributed, key=lambda t: t != anchor):
                    if table not in placed:
                        # The first starts a co-location group of its own; every other one joins it.
                        connection.execute(
                            "SELECT pg_catalog.create_distributed_table(%s, %s, colocate_with => %s)",
                            (table, KEY, "none" if table == anchor else anchor))
                        layout.changed.append(f"distributed table {table} by {KEY}")
                for table, name, definition, _referenced in keys:
                    connection.execute(sql.SQL("ALTER TABLE {} ADD CONSTRAINT {} {}").format(
                        sql.SQL(table), sql.Identifier(name), sql.SQL(definition)))
                for comment in comments:
                    connection.execute(comment)
                # That copy is read by nothing and would hold every message's text a second time.
                for table in loaded:
                    connection.execute("SELECT pg_catalog.truncate_local_data_after_distributing_table(%s)",
                                       (table,))
        # A type that only function bodies use (no table column, no signature) is nobody's dependency, so
        # Citus would not create it on the workers: a throwaway function taking it carries it there.
        for (type_name,) in connection.execute(_TYPES, {"schema": SCHEMA}).fetchall():
            with connection.transaction():
                connection.execute(sql.SQL("CREATE FUNCTION {}.{}(p {}) RETURNS void LANGUAGE sql AS ''").format(
                    sql.Identifier(SCHEMA), sql.Identifier(_CARRIER), sql.SQL(type_name)))
                connection.execute(sql.SQL("SELECT pg_catalog.create_distributed_function({})").format(
                    sql.Literal(f"{SCHEMA}.{_CARRIER}({type_name})")))
                connection.execute(sql.SQL("DROP FUNCTION {}.{}({})").format(
                    sql.Identifier(SCHEMA), sql.Identifier(_CARRIER), sql.SQL(type_name)))
            layout.changed.append(f"type {type_name} on every node")
        # A SQL function's body (BEGIN ATOMIC) is checked on each node when it is created there, so
        # the functions it calls must be there first: distribute in passes until none is left.
        pending = [(f, delegated) for f, done, delegated in _functions(connection) if not done]
        while pending:
            failed: list[tuple[str, bool, str]] = []
            for function, delegated in pending:
                try:
                    if delegated:
                        connection.execute(
                            "SELECT pg_catalog.create_distributed_function(%s, %s, colocate_with => %s, "
                            "force_delegation => true)", (function, DELEGATED_ARGUMENT, anchor))
                    else:
                        connection.execute("SELECT pg_catalog.create_distributed_function(%s)", (function,))
                except psycopg.Error as exc:
                    failed.append((function, delegated, str(exc).splitlines()[0]))
                else:
                    layout.changed.append(f"function {function} " + (
                        f"delegated by {DELEGATED_ARGUMENT}" if delegated else "on every node"))
            if len(failed) == len(pending):
                raise DistributeError(f"could not create {failed[0][0]} on the workers: {failed[0][2]}")
            pending = [(f, delegated) for f, delegated, _ in failed]
        for function in _stale_on_workers(connection):
            layout.changed.append(f"function {function}: the workers' definition replaced by the coordinator's")
        # After the functions: Citus creates the views on the workers too, with what they depend on.
        for view, function, done in connection.execute(_FUNCTION_VIEWS, {"schema": SCHEMA}).fetchall():
            layout.views.append(view)
            if not done:
                # The same columns (PostgreSQL refuses any other replacement), with the view's collations: a
                # function's result columns carry none. The owner, comment and grants stay.
                columns = [sql.SQL("f.{} COLLATE {} AS {}").format(sql.Identifier(n), sql.SQL(c), sql.Identifier(n))
                           if c else sql.SQL("f.{}").format(sql.Identifier(n))
                           for n, c in connection.execute(_VIEW_COLUMNS, (view,)).fetchall()]
                connection.execute(sql.SQL("CREATE OR REPLACE VIEW {} AS SELECT {} FROM {} AS f").format(
                    sql.SQL(view), sql.SQL(", ").join(columns), sql.SQL(function)))
                layout.changed.append(f"view {view} reads {function}")
        # Last: the first object of this database that Citus creates on the workers with its owner
        # re-creates the owner role there as the coordinator has it (NOLOGIN).
        if _owner_logs_in_on_workers(connection):
            layout.changed.append("role history_owner: LOGIN on the workers")
        layout.functions = [f for f, _, _ in _functions(connection)]
        return layout
