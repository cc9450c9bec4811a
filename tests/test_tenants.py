"""Tenants over two real sessions: two services creating the same new tenant at
once both succeed in one tenant (docs/tenants.md, "Where tenants come from")."""

import psycopg

from tests.harness import run_in_thread, wait_until_blocked


def test_two_sessions_creating_one_tenant_share_it(db_dsn):
    with psycopg.connect(db_dsn) as a, psycopg.connect(db_dsn) as b, \
            psycopg.connect(db_dsn, autocommit=True) as observer:
        a.execute("SELECT history.upsert_account('ann', 'person', NULL, 'acme')")  # creates acme, uncommitted
        thread, box = run_in_thread(lambda: b.execute("SELECT history.upsert_conversation('team', 'group', NULL, NULL, 'acme')"))
        wait_until_blocked(observer, b.info.backend_pid, "the second creator of acme")
        a.commit()
        thread.join(30)
        assert not thread.is_alive()
        assert "error" not in box, box.get("error")  # it waited, then found the tenant the first one made
        b.commit()
        assert observer.execute(
            "SELECT count(*), count(DISTINCT t.tenant_key) FROM history.tenants t"
            "  JOIN history.accounts a USING (tenant_key) JOIN history.conversations c USING (tenant_key)"
            " WHERE t.tenant_id = 'acme'").fetchone() == (1, 1)
        observer.execute("SELECT history.add_member('team', 'ann', '2026-01-01', 'acme')")  # one tenant: they meet
