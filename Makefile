# make demo   - set up, then run aoti-lsp on the bundled examples
# make test   - set up (Python env + real editors), then run every test
# make bench  - speed goals: --check vs ruff on torch's sources, keystroke cost in a 20k-line file
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
AOTI := $(VENV)/bin/aoti-lsp
export TORCHINDUCTOR_CACHE_DIR := $(CURDIR)/.cache/inductor

.PHONY: setup demo test test-fast test-editors setup-editors bench docs fuzz clean

$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $@

setup: $(VENV)/.installed

demo: setup
	@echo "== aoti-lsp --check examples/   (exit 1: the examples are meant to have findings)"
	@$(AOTI) --check examples; test $$? -eq 1
	@echo; echo "== the migration it would apply (aoti-lsp --check --diff --unsafe-fixes examples/deprecated_api.py)"
	@$(AOTI) --check --diff --unsafe-fixes examples/deprecated_api.py; test $$? -eq 1
	@echo; echo "== one rule's documentation (aoti-lsp rule AOTI001)"
	@$(AOTI) rule AOTI001 | head -20

setup-editors: setup
	bash scripts/setup-editors.sh

# everything: engine, CLI, LSP (pytest-lsp), pre-commit, real torch, real editors
test: setup setup-editors
	CI=$${CI:-} $(PY) -m pytest -q

# no torch compiles, no editors: the inner loop
test-fast: setup
	$(PY) -m pytest -q -m "not torch" --ignore=tests/editors

# the fuzz suites with thousands of examples (CI runs a few dozen of each)
fuzz: setup
	AOTI_FUZZ=long $(PY) -m pytest -q tests/test_fuzz.py tests/lsp/test_fuzz_server.py

bench: setup
	$(PY) -m pip install -q ruff
	$(PY) scripts/bench.py

docs: setup
	$(PY) scripts/gen_docs.py

clean:
	rm -rf $(VENV) .cache .editors build *.egg-info
