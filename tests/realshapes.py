"""Real-shaped projects of the old AOTI API (tests/torch/projects/migration, issue 18) and the
harness that judges a migration by running it: the project is run as written (old artifact),
migrated in another copy, run again, and its printed numbers compared line by line. Every
project prints its outputs at batch sizes other than its compile example's, so a migration that
loses the dynamic batch fails here even when it compiles and checks clean.

Used by tests/torch/test_real_shapes.py (CLI) and tests/lsp/test_quick_fix_real_shapes.py (editor)."""

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROJECTS = ROOT / "tests" / "torch" / "projects" / "migration"
OLD_API = re.compile(r"\baot_(compile|load)\b")
BANNER = "is being deprecated"  # torch's log line when the old API is called (aoti-facts.md)


@dataclass(frozen=True)
class Shape:
    name: str
    steps: tuple  # each step: python's arguments, run in the copy; "{root}" is the copy's folder;
    # PRINTED: the command an earlier step printed (`python serve.py A B`), as a person runs it next
    blocker: str | None = None  # a blocked shape: the expression its refusal must name
    todo: str | None = None  # why its migration does not work yet: an xfail(strict=True) reason
    editor_only: bool = False  # offered display-only: --fix leaves it, the editor's quick fix applies it

    def runs(self, root: Path) -> list[list[str]]:
        return [[a.replace("{root}", str(root)) for a in step] for step in self.steps]


PRINTED = ("{printed}",)

SHAPES = [
    Shape("tempdir_script", (("run.py",),)),
    Shape("tutorial_two_scripts", (("export.py",), ("serve.py",))),
    Shape("exported_module", (("run.py",),)),
    Shape("options_variable", (("-m", "packer"),)),
    Shape("device_ternary", (("run.py",),)),
    Shape("returned_path_helper", (("main.py",),)),
    Shape("options_updated", (("run.py",),)),
    Shape("compile_unless_given", (("run.py",),)),  # the loader's path is None or the compile's
    Shape("module_named", (("run.py",),)),  # `gm = export(...).module()`: the program is named and compiled
    Shape("package_files", (("run.py",),)),  # `package_aoti(path, files)` of the package flag's list: absorbed
    Shape("device_parameter", (("run.py", "--devices", "cpu"),)),  # the loader's device known only at run time
    Shape("package_in_with", (("run.py",),)),  # package_aoti in a `with` body after the compile: the compile moves there
    # a graph module re-exported statically (faithful here, as the title says it must be): editor only
    Shape("graph_branches", (("run.py",),), editor_only=True),
    # alma's own shape: the graph module branch no caller reaches, the program's dims kept
    Shape("graph_branches_programs", (("run.py",),)),
    # a cache probed, else compiled at a path built at run time (nfdi-demonstrator): its `.so` renamed
    Shape("cache_probe", (("run.py",),)),
    # a helper fills the cache its one caller probes and loads (inference-benchmarks): the caller's `.so` renamed
    Shape("cache_helper", (("run.py",),)),
    # the compile's folder copied and its C++ read beside it (seantempesta/remaster): the package's
    # folder holds the same files
    Shape("returned_folder", (("run.py",),)),
    # a helper compiles to the path its one caller passes, a command-line option's .so default
    # (umut-kocak/PyTorchDemos): the default renamed, the caller's loader migrated with it
    Shape("helper_argument", (("main.py",),)),
    # `aot_compile(ep.module(), *ep.example_inputs)` (zhxchen17/torchnative): the program compiled itself
    Shape("program_inputs", (("run.py",),)),
    # a program of torch.export._trace._export_for_training (torchnative's wip/simple_aoti.py)
    Shape("training_program", (("run.py",),)),
    # two compiles' paths printed as the command for another script, which loads its argv (torchnative's
    # wip/flux_aoti.py and flux_test.py): the compiles and that script's loaders migrated together
    Shape("command_for_script", (("compile.py",), PRINTED)),
    # blocked twins: the artifact leaves the project (a C++ runner, a path chosen by a shell script)
    Shape("cpp_runner", (("export.py", "{root}/net.so"),), blocker="sys.argv[1]"),
    Shape("argv_shell", (("compile.py", "{root}/net.so"), ("serve.py", "{root}/net.so")), blocker="sys.argv[1]"),
]
MIGRATE = [s for s in SHAPES if s.blocker is None and not s.editor_only]
EDITOR_ONLY = [s for s in SHAPES if s.editor_only]
BLOCKED = [s for s in SHAPES if s.blocker is not None]


def torch_env() -> dict:
    """What tests/torch/conftest.py's torch_env gives: the project-local kernel cache."""
    cache = ROOT / ".cache" / "inductor"
    cache.mkdir(parents=True, exist_ok=True)
    return {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(cache), "PYTHONWARNINGS": "ignore"}


def copy(shape: Shape, dest: Path) -> Path:
    shutil.copytree(PROJECTS / shape.name, dest)
    return dest


@dataclass
class Ran:
    root: Path
    lines: list[str]  # stdout of every step, in order
    stderr: str


def run(shape: Shape, root: Path, env: dict, timeout: int = 600) -> Ran:
    """Runs the project's steps in `root`; each must succeed."""
    lines, errs = [], []
    for args in shape.runs(root):
        if args == list(PRINTED):  # its line names this run's artifacts: not compared
            command = next((line for line in reversed(lines) if line.startswith("python ")), None)
            assert command is not None, f"{shape.name}: no command printed in {lines}"
            lines.remove(command)
            args = shlex.split(command)[1:]
        p = subprocess.run([sys.executable, *args], cwd=root, env=env, capture_output=True, text=True,
                           timeout=timeout)
        assert p.returncode == 0, f"{shape.name}: {' '.join(args)} failed:\n{p.stderr[-3000:]}"
        lines += p.stdout.splitlines()
        errs.append(p.stderr)
    return Ran(root, lines, "".join(errs))


_BEFORE: dict[str, Ran] = {}


def before(shape: Shape, base: Path, env: dict) -> Ran:
    """The project run as written, once per session (the CLI and the editor tests share it)."""
    if shape.name not in _BEFORE:
        root = copy(shape, base / f"{shape.name}-old")
        ran = run(shape, root, env)
        assert BANNER in ran.stderr, f"{shape.name} did not call the old API"
        _BEFORE[shape.name] = ran
    return _BEFORE[shape.name]


def aoti(args: list[str], root: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "aoti_lsp", *args], cwd=root, env=env, capture_output=True,
                          text=True, timeout=300)


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file of the project (sources, build scripts, the C++ runner), byte for byte."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".aoti_lsp_cache" not in p.parts and "__pycache__" not in p.parts}


def old_api_left(root: Path) -> list[str]:
    return [f"{p.relative_to(root)}:{i}: {line.strip()}" for p in sorted(root.rglob("*.py"))
            for i, line in enumerate(p.read_text().splitlines(), 1) if OLD_API.search(line)]
