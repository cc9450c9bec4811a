"""Settings for the Python tests. The database fixtures (pg_server, template_db,
db_dsn, conn, connect_as, make_database, pgtap_connection) live in
tests/harness.py, which the root conftest.py loads for the whole tree."""

import os

# tests/test_citus.py needs Citus installed and runs only in the Citus job (make test-citus sets
# HISTORY_SEARCH_CITUS=1); everywhere else it is not collected at all.
collect_ignore = [] if os.environ.get("HISTORY_SEARCH_CITUS") == "1" else ["test_citus.py"]

from hypothesis import HealthCheck, settings

# No timed assertions: hypothesis' per-example deadline is off. CI is derandomized
# so a run can be repeated; locally examples vary from run to run.
settings.register_profile("default", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", parent=settings.get_profile("default"), derandomize=True, print_blob=True)
# The differential suite (tests/test_differential.py) at depth: thousands of random worlds.
# Select with --hypothesis-profile=deep (the hypothesis pytest plugin's flag).
settings.register_profile("deep", parent=settings.get_profile("default"), max_examples=1000)
settings.load_profile("ci" if os.environ.get("CI") else os.environ.get("HYPOTHESIS_PROFILE", "default"))
