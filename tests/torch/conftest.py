import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".cache" / "inductor"


@pytest.fixture
def torch_env():
    """Environment for a subprocess that compiles with AOTI: a project-local kernel cache."""
    pytest.importorskip("torch")
    CACHE.mkdir(parents=True, exist_ok=True)
    return {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(CACHE), "PYTHONWARNINGS": "ignore"}


def run_python(args, env, cwd=None, timeout=600):
    return subprocess.run([sys.executable, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
