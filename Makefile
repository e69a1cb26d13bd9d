# Two entry points: `make demo` (the main job) and `make test` (lint + tests, the docs
# site's strict build included); `make docs` builds the documentation site into site/.
# Each creates .venv when missing. torch==2.13.0 is installed first: its CPU build lies
# on our machines' disk, while an unpinned torch pulls a multi-GB CUDA build.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: venv demo test lint docs docs-serve clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q torch==2.13.0
	$(BIN)/python -m pip install -q -e '.[dev,docs]'
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(BIN)/magma run sorting.SortAll --agent trace --episodes 4 --slots 2 --out runs --name demo-$$(date +%Y%m%d-%H%M%S)

lint: $(STAMP)
	$(BIN)/ruff check .

test: $(STAMP) lint
	$(BIN)/python -m pytest -n 2 -q

# The documentation site, built offline (no CDN, no network) into site/.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

docs-serve: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve

clean:
	rm -rf $(VENV) .pytest_cache site
