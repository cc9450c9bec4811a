"""Root conftest: makes the database fixtures of tests/harness.py available to the
whole tree — the Python tests in tests/ and the pgTAP files in db/tests/
(fixtures of tests/conftest.py would reach only tests/)."""

pytest_plugins = ["tests.harness"]
