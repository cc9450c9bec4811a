.PHONY: bootstrap test demo

bootstrap:
	bash scripts/bootstrap

test: bootstrap
	.venv/bin/pytest $(PYTEST_ARGS)

demo: bootstrap
	.venv/bin/history-search demo
