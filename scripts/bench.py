"""Speed goals (issue 8), measured in one run (machines are noisy: ratios come from one run).

a. A generated 20k-line file with ~1,100 compile / load / call sites (new and old API, in
   functions, methods and at module level, ordinary code between): `--check` <= 1.0 s; the same
   with twice the sites costs <= 2.3x.
b. torch's own sources (copied once from the installed torch into $TMPDIR/aoti-lsp-bench, outside
   any git work tree): `--check` <= 0.5x `ruff check` (default rules, both without cache); a warm
   run with aoti-lsp's cache <= 0.25 s (issue 25).
c. The language server's own functions on the 20k-line file: first diagnostics <= 300 ms (best
   of 3 fresh servers; what didOpen and the first diagnostics do: the whole file's analysis),
   one keystroke <= 15 ms (reparse, analysis, diagnostics) at every place measured: a line's
   first token and its end, in AOTI code and in other code, and a keystroke in AOTI code after
   a new statement was typed (and kept) between two top-level ones. What waits
   for typing to pause (the summary other files read,
   what a keystroke's slice reads) is reported apart.

d. Where users wait (issue 25): a pre-commit run on one staged file of a 40-file project, by the
   command the hook runs (`aoti-lsp --check FILE`, the console script), the file edited and staged
   before each run, the cache filled by the commit before: <= 0.12 s and <= 3.5x a bare
   `python -c pass`. Both a file without AOTI code (most commits) and one with it are measured.
e. Real repositories' trees (50-1,500 files; exported from the bare mirrors in $AOTI_BENCH_MIRRORS,
   default /work/.mirror, into $TMPDIR/aoti-lsp-bench/trees): `--check --no-cache` <= 1.0x `ruff
   check --no-cache` on each; the warm run is printed beside it.

Every measurement runs in a child process with a time limit: one that runs past it is reported
"over limit", never waited for. The bench fails (exit 1) when a run exits with an error or
checks nothing (no findings where the input is built to have them).
"""

from __future__ import annotations

import functools
import json
import os
import re
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# outside the repository: a .gitignore'd folder would be skipped by --check (and by ruff)
CACHE = Path(os.environ.get("AOTI_BENCH_DIR", Path(tempfile.gettempdir()) / "aoti-lsp-bench"))
LIMIT = float(os.environ.get("AOTI_BENCH_LIMIT", 60))  # seconds per measured run
# the default (text) output, as a user, pre-commit or CI runs it; JSON is measured apart for the
# generated file (it prints every fix's edits, so it builds them: libcst). The command is
# installed()'s console script, `aoti-lsp` as pip installs it (not this checkout's editable install)
AOTI = ["<installed aoti-lsp>", "--check", "--exit-zero"]
JSON = ["--output-format", "json"]
failures: list[str] = []
# as installed: with bytecode. A shell with PYTHONDONTWRITEBYTECODE=1 would make every run compile
# every module from source (~0.12 s) — a cost no installed tool pays (pip writes .pyc files)
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


@functools.lru_cache(maxsize=1)
def installed() -> Path:
    """An environment whose Python imports aoti_lsp as a pip-installed wheel lays it out (a folder
    on sys.path, beside its dependencies), with the console script pip writes. A development
    checkout's editable install adds a finder that every Python start imports (~9 ms: pathlib,
    urllib.parse), which no installed copy pays: the CLI is measured as users run it. Its
    dependencies are this interpreter's (their folder on the path, no .pth of theirs run)."""
    import sysconfig

    venv = CACHE / "installed"
    py = venv / "bin" / "python"
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    (Path(site) / "aoti_lsp.pth").write_text(f"{ROOT / 'server'}\n{sysconfig.get_paths()['purelib']}\n")
    script = venv / "bin" / "aoti-lsp"
    script.write_text(console_script(py))
    script.chmod(0o755)
    return py


def console_script(py: Path) -> str:
    """The console script pip writes for `aoti-lsp = aoti_lsp.cli.main:run`, from the template of
    the pip this bench runs under (the project's environment upgrades it: 26.3 here, the pip that
    virtualenv seeds pre-commit's hook environments with here too). pip 26.3's imports no `re`
    (~7 ms with enum, in the hook's measured time until the bench wrote distlib's template);
    an older pip's (distlib's) does."""
    fields = {"module": "aoti_lsp.cli.main", "import_name": "run", "func": "run"}
    try:
        from pip._internal.operations.install.wheel import PipScriptMaker

        template = PipScriptMaker.script_template
    except (ImportError, AttributeError):
        from pip._vendor.distlib.scripts import ScriptMaker

        template = ScriptMaker.script_template
    return f"#!{py}\n# -*- coding: utf-8 -*-\n" + template % fields


class OverLimit(Exception):
    pass


# -- the generated file ----------------------------------------------------------------------------
def _filler(rng: random.Random, n: int) -> str:
    """Ordinary code between the AOTI code: helpers, loops, dicts, string work."""
    name = f"helper_{n}"
    kind = rng.randrange(4)
    if kind == 0:
        return (f"def {name}(rows, scale={rng.randint(1, 9)}):\n"
                "    total = 0\n"
                "    for i, row in enumerate(rows):\n"
                "        if not row:\n"
                "            continue\n"
                "        total += sum(v * scale for v in row) / (i + 1)\n"
                "    return total\n")
    if kind == 1:
        return (f"def {name}(config: dict) -> dict:\n"
                "    out = {}\n"
                "    for key, value in sorted(config.items()):\n"
                "        if isinstance(value, str):\n"
                "            value = value.strip().lower()\n"
                f"        out[key.replace('-', '_')] = value or {rng.randint(0, 99)}\n"
                "    return out\n")
    if kind == 2:
        return (f"class Record{n}:\n"
                "    def __init__(self, name, values):\n"
                "        self.name = name\n"
                "        self.values = list(values)\n\n"
                "    def mean(self):\n"
                "        return sum(self.values) / max(len(self.values), 1)\n\n"
                "    def __repr__(self):\n"
                "        return f\"Record({self.name!r}, {self.mean():.2f})\"\n")
    return (f"def {name}(text):\n"
            "    words = [w for w in text.split() if w.isalpha()]\n"
            "    counts = {}\n"
            "    for w in words:\n"
            "        counts[w] = counts.get(w, 0) + 1\n"
            f"    return sorted(counts, key=counts.get)[:{rng.randint(3, 20)}]\n")


def _group(rng: random.Random, i: int) -> tuple[str, int]:
    """One piece of AOTI code and how many compile / load / call sites it holds."""
    dev = rng.choice(["cuda", "cpu", "cuda:0"])
    shape = f"{rng.randint(1, 8)}, {rng.choice([8, 16, 32, 64])}"
    kind = rng.randrange(6)
    # scripts and notebooks rebind the same names over and over (`ep`, `runner`): half the
    # module-level groups do, the other half use names of their own
    ep, pkg, run, out, so = (("ep", "pkg", "runner", "out", "so_path") if rng.random() < 0.5 else
                             (f"EP_{i}", f"PKG_{i}", f"RUNNER_{i}", f"OUT_{i}", f"so_{i}"))
    if kind == 0:  # new API, module level: export + package + load + call
        return (f"{ep} = torch.export.export(Net{i % 7}().eval(), (torch.randn({shape}, device=\"{dev}\"),))\n"
                f"{pkg} = torch._inductor.aoti_compile_and_package({ep}, package_path=\"artifacts/m{i}.pt2\")\n"
                f"{run} = torch._inductor.aoti_load_package({pkg})\n"
                f"{out} = {run}(torch.randn({shape}))\n", 4)
    if kind == 1:  # new API in functions: build in one, serve in another
        return (f"def build_{i}(model):\n"
                f"    example = torch.randn({shape}, device=\"{dev}\")\n"
                "    ep = torch.export.export(model, (example,))\n"
                f"    return torch._inductor.aoti_compile_and_package(ep, package_path=\"artifacts/f{i}.pt2\")\n\n\n"
                f"def serve_{i}(batch):\n"
                f"    runner = torch._inductor.aoti_load_package(\"artifacts/f{i}.pt2\")\n"
                f"    first = runner(torch.randn({shape}))\n"
                "    return first, runner(batch)\n", 5)
    if kind == 2:  # old API at module level
        return (f"{so} = torch._export.aot_compile(Net{i % 7}(), (torch.randn({shape}),))\n"
                f"{run} = torch._export.aot_load({so}, \"{dev.split(':')[0]}\")\n"
                f"print({run}(torch.randn({shape})))\n", 3)
    if kind == 3:  # old API in a function
        return (f"def legacy_{i}(model, x):\n"
                "    so_path = torch._inductor.aot_compile(model, (x,))\n"
                "    runner = torch._export.aot_load(so_path, \"cpu\")\n"
                "    return runner(x)\n", 3)
    if kind == 4:  # a runner kept on the instance, called in another method
        return (f"class Scorer{i}:\n"
                "    def __init__(self):\n"
                f"        self.runner = torch._inductor.aoti_load_package(\"artifacts/m{i - 1}.pt2\", device_index=0)\n\n"
                "    def score(self, rows):\n"
                "        return self.runner(torch.tensor(rows))\n", 2)
    return (f"def export_and_package_{i}(model, out=\"artifacts/p{i}.pt2\"):\n"  # package with inductor configs
            f"    ep = torch.export.export(model, (torch.randn({shape}),), dynamic_shapes=None)\n"
            "    path = torch._inductor.aoti_compile_and_package(ep, package_path=out,\n"
            "                                                   inductor_configs={\"max_autotune\": False})\n"
            "    loaded = torch._inductor.aoti_load_package(path)\n"
            f"    return loaded(torch.randn({shape}))\n", 4)


def generate(sites: int, lines: int, seed: int = 8) -> tuple[str, int, int]:
    """(source, sites, lines): AOTI groups until `sites`, filler spread so the file has ~`lines`."""
    rng = random.Random(seed)
    groups, count = [], 0
    while count < sites:
        text, n = _group(rng, len(groups))
        groups.append(text)
        count += n
    head = ("import os\n\nimport torch\n\n\n" + "".join(
        f"class Net{k}(torch.nn.Module):\n    def forward(self, x):\n        return x.relu() * {k + 1}\n\n\n" for k in range(7)))
    used = head.count("\n") + sum(g.count("\n") + 2 for g in groups)
    parts, n, filler_lines = [head], 0, 0
    budget = max(lines - used, 0)
    for k, g in enumerate(groups):
        parts.append(g + "\n\n")
        while filler_lines < budget * (k + 1) / len(groups):
            f = _filler(rng, n)
            n += 1
            filler_lines += f.count("\n") + 2
            parts.append(f + "\n\n")
    text = "".join(parts)
    return text, count, text.count("\n")


def write_generated(name: str, sites: int, lines: int) -> Path:
    folder = CACHE / "generated" / name  # a folder of its own: the project is this one file
    folder.mkdir(parents=True, exist_ok=True)
    text, count, n = generate(sites, lines)
    path = folder / "big.py"
    if not path.exists() or path.read_text("utf-8") != text:
        path.write_text(text, "utf-8")
    return path


# -- running -------------------------------------------------------------------------------------
STDERR: dict[str, str] = {}  # label -> the last run's stderr (the text summary line is there)
CPU: dict[str, float] = {}  # label -> CPU seconds (user + sys, all processes) of the best run


def timed(cmd: list[str], cwd: Path, runs: int = 3, limit: float = LIMIT, label: str = "") -> tuple[float, str]:
    """Best wall time of `runs` runs (fewer when one takes over a few seconds) and the last stdout.
    The CPU time of that run goes to CPU[label]: on a shared machine it shows what wall time hides."""
    best, out = None, ""
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        try:
            proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=limit, env=ENV)
        except subprocess.TimeoutExpired:
            raise OverLimit(f"over limit ({limit:.0f} s)") from None
        elapsed = time.perf_counter() - t
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if proc.returncode != 0:
            failures.append(f"{label}: exit code {proc.returncode}: {proc.stderr.strip()[-500:]}")
        out = proc.stdout
        STDERR[label] = proc.stderr
        if best is None or elapsed < best:
            best = elapsed
            CPU[label] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        if elapsed > 5:
            break
    return best, out


def findings(out: str, label: str) -> int:
    """Findings in a run's output: the JSON list's length, or the text summary's count."""
    try:
        n = len(json.loads(out))
    except ValueError:
        m = re.search(r"^Found (\d+) findings?", out + STDERR.get(label, ""), re.M)
        n = int(m.group(1)) if m else 0
    if n == 0:
        failures.append(f"{label}: checked nothing (no findings)")
    return n


def verdict(value: float, goal: float) -> str:
    return "meets" if value <= goal else "MISSES"


def generated_file() -> None:
    small = write_generated("sites-1100", 1100, 20_000)
    double = write_generated("sites-2200", 2200, 40_000)
    times = {}
    for label, path in (("1x", small), ("2x", double)):
        text = path.read_text("utf-8")
        try:
            t, out = timed([*AOTI, "--no-cache", "big.py"], path.parent, label=f"generated {label}")
        except OverLimit as exc:
            print(f"a. generated file {label} ({text.count(chr(10))} lines): --check {exc}")
            times[label] = None
            continue
        n = findings(out, f"generated {label}")
        times[label] = t
        line = f"a. generated file {label} ({text.count(chr(10))} lines, {n} findings): --check {t:.2f} s"
        if label == "1x":
            line += f" (goal <= 1.0 s: {verdict(t, 1.0)})"
        print(line)
    if times.get("1x") and times.get("2x"):
        r = times["2x"] / times["1x"]
        print(f"a. doubling the sites: {r:.2f}x (goal <= 2.3x: {verdict(r, 2.3)})")
    else:
        print("a. doubling the sites: not measured (a run was over the limit)")
    try:  # the JSON output prints every fix's edits: it builds them all (libcst), no goal of its own
        t, out = timed([*AOTI, *JSON, "--no-cache", "big.py"], small.parent, label="generated 1x json")
        print(f"   with --output-format json (every fix built): {t:.2f} s, {findings(out, 'generated 1x json')} findings")
    except OverLimit as exc:
        print(f"   with --output-format json: {exc}")


def torch_sources() -> Path:
    out = CACHE / "torch-src"
    if not out.exists():
        import importlib.util

        spec = importlib.util.find_spec("torch")
        if spec is None or not spec.submodule_search_locations:
            sys.exit("bench needs torch installed (pip install -e '.[test]')")
        src = Path(list(spec.submodule_search_locations)[0])
        tmp = CACHE / "torch-src.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        for f in src.rglob("*.py"):
            dest = tmp / "torch" / f.relative_to(src)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f, dest)
        tmp.rename(out)
    return out


def torch_tree() -> None:
    tree = torch_sources()
    size = sum(f.stat().st_size for f in tree.rglob("*.py")) / 1e6
    ruff = ruff_exe()
    try:
        a, out = timed([*AOTI, "--no-cache", str(tree)], CACHE, label="torch --check")
        findings(out, "torch --check")
        r, _ = timed([ruff, "check", "--no-cache", "--exit-zero", "--quiet", "--isolated", str(tree)], CACHE, label="ruff")
        print(f"b. torch sources ({size:.0f} MB, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}): aoti-lsp {a:.2f} s, "
              f"ruff {r:.2f} s, ratio {a / r:.2f} (goal <= 0.5x: {verdict(a / r, 0.5)}); "
              f"CPU {CPU['torch --check']:.2f} s vs {CPU['ruff']:.2f} s")
        shutil.rmtree(tree / ".aoti_lsp_cache", ignore_errors=True)
        timed([*AOTI, str(tree)], CACHE, runs=1, label="torch cache fill")
        w, out = timed([*AOTI, str(tree)], CACHE, label="torch warm")
        findings(out, "torch warm")
        print(f"b. torch sources, warm (cache): {w:.2f} s, CPU {CPU['torch warm']:.2f} s (goal <= 0.25 s: {verdict(w, 0.25)})")
    except OverLimit as exc:
        print(f"b. torch sources: {exc}")


def ruff_exe() -> str:
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if ruff is None:
        sys.exit("bench needs ruff (pip install ruff)")
    return ruff


# -- where users wait: one staged file, real trees -------------------------------------------------
def _hook_cmd() -> list[str]:
    """What the pre-commit hook runs (.pre-commit-hooks.yaml: `aoti-lsp --check`), as installed."""
    return [str(installed().parent / "aoti-lsp"), "--check"]


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env={
        **ENV, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@b"})


def small_project() -> Path:
    """A 40-file project in a git repository of its own: 38 ordinary modules, 2 with AOTI code."""
    root = CACHE / "precommit-project"
    if (root / ".git").exists():
        return root
    shutil.rmtree(root, ignore_errors=True)
    rng = random.Random(25)
    for i in range(38):
        path = root / "app" / f"mod_{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("import os\nimport json\n\n\n" + "\n\n".join(_filler(rng, i * 10 + k) for k in range(12)), "utf-8")
    for i in range(2):  # the deprecated API (AOTI001/002): findings
        (root / "app" / f"aoti_{i}.py").write_text(
            "import torch\n\n\nclass Net(torch.nn.Module):\n    def forward(self, x):\n        return x.relu()\n\n\n"
            f"so_path = torch._export.aot_compile(Net(), (torch.randn(2, {8 + i}),))\n"
            "runner = torch._export.aot_load(so_path, \"cpu\")\n", "utf-8")
    (root / "pyproject.toml").write_text('[project]\nname = "small"\nversion = "0"\n', "utf-8")
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "start")
    return root


def _checked(label: str, out: str) -> bool:
    """Whether a run checked something: the text summary says so (never printed for nothing)."""
    text = out + STDERR.get(label, "")
    if "All checks passed!" in text or re.search(r"^Found \d+ findings?", text, re.M):
        return True
    failures.append(f"{label}: checked nothing (no summary line)")
    return False


def staged_run(root: Path, rel: str, label: str, runs: int = 7) -> float:
    """Best wall time of the hook's command on `rel`, edited and staged before each run (a
    commit's file has changed since the cache saw it)."""
    path = root / rel
    base = path.read_text("utf-8").split("\n# bench edit")[0]
    best = None
    for k in range(runs + 1):  # the first fills the cache: the commit before
        path.write_text(f"{base}\n# bench edit {k} {time.time_ns()}\n", "utf-8")
        _git(root, "add", rel)
        t, out = timed([*_hook_cmd(), rel], root, runs=1, label=label)
        if k:
            best = t if best is None else min(best, t)
    _checked(label, out)
    return best


def startup() -> None:
    py, _ = timed([str(installed()), "-c", "pass"], CACHE, runs=7, label="python -c pass")
    print(f"d. python -c pass: {py * 1000:.0f} ms (the interpreter of the installed aoti-lsp: no editable-install finder)")
    root = small_project()
    for rel, what in (("app/mod_7.py", "without AOTI code"), ("app/aoti_0.py", "with AOTI code")):
        label = f"staged {what}"
        # the hook fails the commit on findings: exit 1 is its answer there, not an error
        before = len(failures)
        t = staged_run(root, rel, label)
        failures[before:] = [f for f in failures[before:] if not (what == "with AOTI code" and "exit code 1:" in f)]
        if what == "with AOTI code":
            findings("", label)
        r = t / py
        print(f"d. pre-commit, one staged file {what} (40-file project): {t * 1000:.0f} ms, {r:.1f}x python -c pass "
              f"(goal <= 120 ms and <= 3.5x: {verdict(max(t / 0.12, r / 3.5), 1.0)}); CPU {CPU[label] * 1000:.0f} ms")


MIRRORS = Path(os.environ.get("AOTI_BENCH_MIRRORS", "/work/.mirror"))
TREES = ("e3nn+e3nn", "meta-recsys+generative-recommenders", "pytorch-labs+helion", "pytorch+torchrec", "pytorch+ao")  # 113, 154, 137, 532, 633 .py files


def real_trees() -> list[Path]:
    out = []
    for name in TREES:
        dest = CACHE / "trees" / name
        if not dest.exists():
            git_dir = MIRRORS / name / "repo"
            if not git_dir.exists():
                print(f"e. {name}: not measured (no mirror at {git_dir})")
                continue
            tmp = dest.with_suffix(".tmp")
            shutil.rmtree(tmp, ignore_errors=True)
            tmp.mkdir(parents=True)
            archive = subprocess.run(["git", "--git-dir", str(git_dir), "archive", "HEAD"], capture_output=True, check=True)
            subprocess.run(["tar", "-x", "-C", str(tmp)], input=archive.stdout, check=True)
            tmp.rename(dest)
        out.append(dest)
    return out


def trees() -> None:
    ruff = ruff_exe()
    for tree in real_trees():
        n = sum(1 for _ in tree.rglob("*.py"))
        label = f"tree {tree.name}"
        try:
            # interleaved, best of 5 each: on a shared machine one slow run says little
            a = r = None
            cpu = {}
            for _ in range(5):
                t, out = timed([*AOTI, "--no-cache", "."], tree, runs=1, label=label)
                _checked(label, out)
                u, _ = timed([ruff, "check", "--no-cache", "--exit-zero", "--quiet", "--isolated", "."], tree, runs=1,
                             label="ruff " + tree.name)
                if a is None or t < a:
                    a, cpu[label] = t, CPU[label]
                if r is None or u < r:
                    r, cpu["ruff " + tree.name] = u, CPU["ruff " + tree.name]
            CPU.update(cpu)  # the best runs' CPU time
            shutil.rmtree(tree / ".aoti_lsp_cache", ignore_errors=True)
            timed([*AOTI, "."], tree, runs=1, label=label + " fill")
            w, out = timed([*AOTI, "."], tree, runs=3, label=label + " warm")
            _checked(label + " warm", out)
        except OverLimit as exc:
            print(f"e. {tree.name}: {exc}")
            continue
        print(f"e. {tree.name} ({n} .py files): aoti-lsp {a:.2f} s, ruff {r:.2f} s, ratio {a / r:.2f} "
              f"(goal <= 1.0x: {verdict(a / r, 1.0)}); warm {w:.2f} s; CPU {CPU[label]:.2f} s vs {CPU['ruff ' + tree.name]:.2f} s")


# -- the server (child process) --------------------------------------------------------------------
def server_child(path: str, keystrokes: int) -> None:
    """Runs in a child: the server's own functions on the file, one JSON line per result."""
    from lsprotocol import types

    from aoti_lsp.lsp.capabilities import ResolvedClientCapabilities
    from aoti_lsp.lsp.documents import Document
    from aoti_lsp.lsp.server import AotiServer

    text = Path(path).read_text("utf-8")
    ls = AotiServer()
    ls.caps = ResolvedClientCapabilities(related_information=True)

    def diagnostics(doc):  # what a recheck does after didOpen / didChange: the summary deferred, the diagnostics
        ls.update_summary(doc.path, doc.source(), defer=True)
        return ls.diagnostics(doc)

    t, cpu = time.perf_counter(), time.process_time()
    doc = ls.docs[Path(path).as_uri()] = Document(Path(path).as_uri(), path, text, 0)
    first = diagnostics(doc)
    print(json.dumps({"first_ms": (time.perf_counter() - t) * 1000, "first_cpu_ms": (time.process_time() - cpu) * 1000,
                      "findings": len(first)}), flush=True)
    t = time.perf_counter()
    ls.settled()  # the pause after opening (guards.SETTLE_S): the file's summary, what a keystroke in AOTI code reads
    print(json.dumps({"opened_settle_ms": (time.perf_counter() - t) * 1000}), flush=True)
    lines = text.split("\n")
    aoti = next(i for i, l in enumerate(lines) if "aoti_load_package(" in l and i > len(lines) // 2)
    spots = [(aoti, "AOTI code"), (len(lines) // 4, "other code"), (3 * len(lines) // 4, "other code")]
    for k in range(keystrokes):
        line, where = spots[k % len(spots)]
        # a line's first token (tree-sitter-python then reparses the rest of the file), or its end
        at_end = (k // len(spots)) % 2 == 1
        col = len(lines[line]) if at_end else len(lines[line]) - len(lines[line].lstrip())
        t = time.perf_counter()
        doc.apply([types.TextDocumentContentChangePartial(
            range=types.Range(types.Position(line, col), types.Position(line, col)), text="x")], 2 * k + 1, "utf-16")
        diagnostics(doc)
        doc.apply([types.TextDocumentContentChangePartial(
            range=types.Range(types.Position(line, col), types.Position(line, col + 1)), text="")], 2 * k + 2, "utf-16")
        diagnostics(doc)
        ms = (time.perf_counter() - t) / 2 * 1000  # two edits per loop: per keystroke
        print(json.dumps({"key_ms": ms, "aoti": where == "AOTI code", "where": f"{where}, {'line end' if at_end else 'first token'}"}),
              flush=True)
    # a new statement typed on a blank line between two top-level ones and kept (its first
    # character: the file has one statement more), then a keystroke in AOTI code; ten times, each
    # at another blank line (a statement typed and deleted again gives the entry its own text
    # back: slice.py keeps it for that one edit)
    blanks = [i for i in range(len(lines) // 3, len(lines) - 1) if not lines[i] and not lines[i - 1]
              and lines[i + 1][:1] not in ("", " ")][::7][:10]
    col = len(lines[aoti]) - len(lines[aoti].lstrip())
    for k, new_at in enumerate(blanks):
        version = 500 + 3 * k
        doc.apply([types.TextDocumentContentChangePartial(
            range=types.Range(types.Position(new_at, 0), types.Position(new_at, 0)), text="p")], version, "utf-16")
        diagnostics(doc)
        t = time.perf_counter()
        doc.apply([types.TextDocumentContentChangePartial(
            range=types.Range(types.Position(aoti, col), types.Position(aoti, col)), text="x")], version + 1, "utf-16")
        diagnostics(doc)
        print(json.dumps({"kept_ms": (time.perf_counter() - t) * 1000}), flush=True)
        doc.apply([types.TextDocumentContentChangePartial(
            range=types.Range(types.Position(aoti, col), types.Position(aoti, col + 1)), text="")], version + 2, "utf-16")
        diagnostics(doc)
    # once typing pauses (1 s): summaries stored, results kept through a syntax error checked
    # against the file's tree (incremental.py, provisional): once per pause, not per keystroke
    line = spots[1][0]
    col = len(lines[line]) - len(lines[line].lstrip())
    for k in range(3):
        doc.apply([types.TextDocumentContentChangePartial(
            range=types.Range(types.Position(line, col), types.Position(line, col)), text="x")], 1000 + k, "utf-16")
        diagnostics(doc)
        t = time.perf_counter()
        ls.settled()
        diagnostics(doc)
        print(json.dumps({"settle_ms": (time.perf_counter() - t) * 1000, "guessed": True}), flush=True)
        doc.apply([types.TextDocumentContentChangePartial(
            range=types.Range(types.Position(line, col), types.Position(line, col + 1)), text="")], 1100 + k, "utf-16")
        diagnostics(doc)


def server() -> None:
    path = write_generated("sites-1100", 1100, 20_000)

    def first_runs() -> list[tuple[float, float]] | None:
        """(wall ms, CPU ms) of the first diagnostics of 3 fresh servers, one open each (the best
        counts, as `timed` takes the best of 3 runs)."""
        runs = []
        for _ in range(3):
            run = subprocess.run([sys.executable, __file__, "--server-child", str(path), "0"],
                                 capture_output=True, text=True, env=ENV, timeout=LIMIT)
            row = next((json.loads(line) for line in run.stdout.splitlines() if '"first_ms"' in line), None)
            if run.returncode != 0 or row is None:
                failures.append(f"server: exit code {run.returncode}: {run.stderr.strip()[-500:]}")
                return None
            runs.append((row["first_ms"], row["first_cpu_ms"]))
        return runs

    runs = first_runs()
    best_ms = min(ms for ms, _ in runs) if runs else None
    cmd = [sys.executable, __file__, "--server-child", str(path), "60"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    try:
        out, err = proc.communicate(timeout=LIMIT)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
    rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    if proc.returncode not in (0, -9) and proc.returncode is not None:
        failures.append(f"server: exit code {proc.returncode}: {err.strip()[-500:]}")
    first = next((r for r in rows if "first_ms" in r), None)
    if first is None:
        print(f"c. server, first diagnostics on the generated file: over limit ({LIMIT:.0f} s)")
        print("c. server, keystroke: not measured")
        return
    if first["findings"] == 0:
        failures.append("server: no diagnostics on the generated file")
    ms = best_ms if best_ms is not None else first["first_ms"]
    print(f"c. server, first diagnostics on the generated file ({first['findings']} diagnostics; best of 3 "
          f"servers): {ms:.0f} ms (goal <= 300 ms: {verdict(ms, 300)})")
    if runs:  # the spread of one code's cold runs; CPU time ~ wall time: a slow run is a slower CPU, not waiting
        print(f"   the 3 servers: {', '.join(f'{w:.0f}' for w, _ in runs)} ms; CPU time "
              f"{', '.join(f'{c:.0f}' for _, c in runs)} ms")
    keys = [r["key_ms"] for r in rows if "key_ms" in r]
    if not keys:
        print(f"c. server, keystroke: over limit ({LIMIT:.0f} s for the first diagnostics and one keystroke)")
        return
    # the goal holds for every place a keystroke lands, not for a mix of cheap and dear ones
    places = {where: [r["key_ms"] for r in rows if r.get("where") == where]
              for where in dict.fromkeys(r["where"] for r in rows if "where" in r)}
    kept = [r["kept_ms"] for r in rows if "kept_ms" in r]
    if kept:
        places["AOTI code, after a new statement typed and kept"] = kept
    worst = max(statistics.median(ms) for ms in places.values())
    print(f"c. server, keystroke ({len(keys)} measured{'' if len(keys) == 60 else ', the rest over the limit'}): "
          f"median {statistics.median(keys):.1f} ms, p95 {sorted(keys)[int(len(keys) * 0.95)]:.1f} ms; "
          f"worst place's median {worst:.1f} ms (goal <= 15 ms at every place: {verdict(worst, 15)})")
    for where, ms in places.items():
        print(f"   {where}: median {statistics.median(ms):.1f} ms ({len(ms)} keystrokes)")
    opened = next((r["opened_settle_ms"] for r in rows if "opened_settle_ms" in r), None)
    if opened is not None:
        print(f"   once typing pauses after the open: {opened:.0f} ms (the file's summary other files read, "
              "what a keystroke's slice reads; no goal)")
    settles = [r["settle_ms"] for r in rows if "settle_ms" in r]
    if settles:
        print(f"   once typing pauses (after a syntax error typed in other code): median {statistics.median(settles):.0f} ms "
              "(the file's parse and summary; once per pause, no goal)")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--server-child":
        server_child(sys.argv[2], int(sys.argv[3]))
        sys.exit(0)
    CACHE.mkdir(parents=True, exist_ok=True)
    import compileall

    compileall.compile_dir(str(ROOT / "server" / "aoti_lsp"), quiet=1)
    AOTI[0] = str(installed().parent / "aoti-lsp")
    only = set(sys.argv[1:]) or {"generated", "torch", "server", "startup", "trees"}
    if "generated" in only:
        generated_file()
    if "startup" in only:
        startup()
    if "torch" in only:
        torch_tree()
    if "trees" in only:
        trees()
    if "server" in only:
        server()
    if failures:
        print("\nbench FAILED:\n  " + "\n  ".join(failures))
        sys.exit(1)
