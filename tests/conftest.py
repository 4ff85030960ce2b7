import os
import shutil
import tempfile

import pytest


def pytest_addoption(parser):
    parser.addoption("--update-goldens", action="store_true", help="rewrite expected fixture outputs")


def pytest_configure(config):
    """torch extracts every loaded package into `$TMPDIR/aotinductor_*` and never removes it:
    the session gets a private TMPDIR (for torch in this process and in every subprocess),
    removed at the end. Python's own temp folder (pytest's tmp_path) is left where it was."""
    if hasattr(config, "workerinput") or "AOTI_TESTS_TMPDIR" in os.environ:
        return
    tempfile.gettempdir()  # computed and cached before TMPDIR moves
    private = tempfile.mkdtemp(prefix="aoti-lsp-tests-")
    config._aoti_tmpdir = (private, os.environ.get("TMPDIR"))
    os.environ["TMPDIR"] = os.environ["AOTI_TESTS_TMPDIR"] = private


def pytest_unconfigure(config):
    saved = getattr(config, "_aoti_tmpdir", None)
    if saved is None:
        return
    private, before = saved
    shutil.rmtree(private, ignore_errors=True)
    os.environ.pop("AOTI_TESTS_TMPDIR", None)
    if before is None:
        os.environ.pop("TMPDIR", None)
    else:
        os.environ["TMPDIR"] = before


@pytest.fixture
def update_goldens(request):
    return request.config.getoption("--update-goldens")
