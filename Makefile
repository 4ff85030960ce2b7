# make demo   - install the tool alone (no torch), then run aoti-lsp on the bundled examples
# make test   - set up (Python env + test extras + real editors), then run every test, and the
#               deprecation/migration torch tests again under the newest torch (test-torch-next;
#               when the disk has no room for its ~5.4 GB it says NOT RUN, and why, and goes on)
# make bench  - speed goals: a generated 20k-line file, torch's sources vs ruff (and warm), the server;
#               then the editor as a stdio client feels it (scripts/bench_editor.py: pull and push)
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
AOTI := $(VENV)/bin/aoti-lsp
export TORCHINDUCTOR_CACHE_DIR := $(CURDIR)/.cache/inductor

# the newest torch installable here: the deprecation and migration tests run against it too
TORCH_NEXT ?= 2.14.1
VENV_NEXT := .venv-torch$(TORCH_NEXT)

.PHONY: setup demo test test-fast test-editors setup-editors test-torch-next bench docs fuzz clean

# the tool alone (what `make demo` needs: no torch, ~51 MB)
$(VENV)/.tool: pyproject.toml
	@bash scripts/need-disk.sh 1 "the tool's environment (.venv)"
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e .
	touch $@

# plus the test extras (torch 2.13 CPU, pytest, pre-commit)
$(VENV)/.installed: $(VENV)/.tool
	@bash scripts/need-disk.sh 2 "the test extras (torch 2.13 CPU, pytest, pre-commit; ~1 GB installed)"
	$(PY) -m pip install -q -e '.[test]'
	touch $@

setup: $(VENV)/.installed

# torch $(TORCH_NEXT) in a venv of its own; every other package (pytest, aoti-lsp itself) comes
# from $(VENV), added after torch's site-packages by a .pth file. pip reads the wheels from the
# local disk: ~3 min and ~5.4 GB (2.14.1 is a CUDA build: its nvidia-* libraries load with it).
$(VENV_NEXT)/.installed: | $(VENV)/.installed
	@bash scripts/need-disk.sh 8 "torch $(TORCH_NEXT)'s environment ($(VENV_NEXT), ~5.4 GB)"
	python3 -m venv $(VENV_NEXT)
	$(VENV_NEXT)/bin/python -m pip install -q torch==$(TORCH_NEXT)
	main=$$($(PY) -c "import sysconfig; print(sysconfig.get_paths()['purelib'])"); \
	next=$$($(VENV_NEXT)/bin/python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])"); \
	echo "import site; site.addsitedir('$$main')" > "$$next/zz-aoti-lsp-main-venv.pth"
	touch $@

test-torch-next: $(VENV_NEXT)/.installed
	AOTI_EXPECT_TORCH=$(TORCH_NEXT) $(VENV_NEXT)/bin/python -m pytest -q -p no:cacheprovider tests/torch/test_deprecation.py tests/torch/test_migration.py

demo: $(VENV)/.tool
	@echo "== aoti-lsp --check examples/   (exit 1: the examples are meant to have findings)"
	@$(AOTI) --check examples; test $$? -eq 1
	@echo; echo "== the migration it would apply (aoti-lsp --check --diff --unsafe-fixes examples/deprecated_api.py)"
	@$(AOTI) --check --diff --unsafe-fixes examples/deprecated_api.py; test $$? -eq 1
	@echo; echo "== one rule's documentation (aoti-lsp rule AOTI001)"
	@$(AOTI) rule AOTI001 | head -20

setup-editors: setup
	@[ -d .editors ] || bash scripts/need-disk.sh 2 "the real editors (.editors, ~0.9 GB)"
	bash scripts/setup-editors.sh

# everything: engine, CLI, LSP (pytest-lsp), pre-commit, real torch, real editors
test: setup setup-editors
	CI=$${CI:-} $(PY) -m pytest -q
	@if [ -f $(VENV_NEXT)/.installed ] || bash scripts/need-disk.sh 8 "torch $(TORCH_NEXT)'s environment" 2>/dev/null; then \
	    $(MAKE) --no-print-directory test-torch-next; \
	else \
	    echo; echo "NOT RUN: the deprecation and migration tests under torch $(TORCH_NEXT) (make test-torch-next)."; \
	    echo "         Its environment needs ~8 GB free to install (a CUDA build, ~5.4 GB); this disk has less:"; \
	    bash scripts/need-disk.sh 8 "torch $(TORCH_NEXT)'s environment" 2>&1 | sed -n 1p | sed 's/^error: /         /'; \
	    echo "         Every test above ran, under torch 2.13."; \
	fi

# no torch compiles, no editors: the inner loop
test-fast: setup
	$(PY) -m pytest -q -m "not torch" --ignore=tests/editors

# the fuzz suites with thousands of examples (CI runs a few dozen of each)
fuzz: setup
	AOTI_FUZZ=long $(PY) -m pytest -q tests/test_fuzz.py tests/lsp/test_fuzz_server.py

bench: setup
	$(PY) -m pip install -q ruff
	$(PY) scripts/bench.py
	$(PY) scripts/bench_editor.py --push

docs: setup
	$(PY) scripts/gen_docs.py

clean:
	rm -rf $(VENV) .venv-torch* .cache .editors build *.egg-info
