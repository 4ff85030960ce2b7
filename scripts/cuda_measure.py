"""Measure what torch really prints for AOTI misuse on CUDA, as a JSON of scenario -> result.

    python3 scripts/cuda_measure.py OUT.json [--work DIR] [--jobs N]

Run on a machine with one or more CUDA GPUs (not by the tests: CI has none). It compiles the
project's own models (tests/packages/cuda/models.py, a Linear(10, 4) with a fixed batch of 2,
tests/packages/cuda/migration/old_cuda.py and the user files of tests/packages/cuda/user/), then runs
each scenario in its own process (a CUDA error poisons the process), with CUDA_LAUNCH_BLOCKING=1.
Every process gets CXX=/usr/bin/g++ (AOTI_MEASURE_CXX to change it), even where CXX is set: the GPU
image's CXX=/opt/gcc/bin/g++ builds packages whose load segfaults (measured: every load -11), and
TORCHINDUCTOR_VEC_ISA_OK=1 unless set. About 3 minutes on an H200 with 16 cores (--jobs 12).
Each result: rc, signal, secs, env, stdout, the key lines of stderr and its last 6,000 characters;
the work folder is written `<work>`. tests/test_explain_cuda.py reads the committed results.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = os.path.join(REPO, "tests", "packages", "cuda")
MIGRATION = os.path.join(MODELS, "migration")
USER = os.path.join(MODELS, "user")
# scenario -> (files run in order, extra env): the measured scenarios as a user writes them
USER_RUNS = {
    "user_so_on_cpu": (["so_on_cpu.py"], {}),
    "user_cuda_pkg_cpu_input": (["cuda_pkg_cpu_input.py"], {}),
    "user_cpu_pkg_cuda_input": (["cpu_pkg_cuda_input.py"], {}),
    "user_device_index": (["device_index.py"], {}),
    "user_wrong_batch": (["wrong_batch.py"], {}),
    "user_wrong_batch_CHECK_INPUTS": (["wrong_batch.py"], {"AOTI_RUNTIME_CHECK_INPUTS": "1"}),
    "user_two_files": (["two_files/build.py", "two_files/serve.py"], {}),
}

PRELUDE = f"import os, sys, torch\nsys.path.insert(0, {MODELS!r})\nW = sys.argv[1]\n"
LINEAR = PRELUDE + """
torch.manual_seed(0)
m = torch.nn.Linear(10, 4).eval()
"""
# name -> code; the package lands in W
COMPILES = {
    "compile_cuda_pkg": LINEAR + """m = m.to("cuda")
ep = torch.export.export(m, (torch.randn(2, 10, device="cuda"),))
print(torch._inductor.aoti_compile_and_package(ep, package_path=os.path.join(W, "lin_cuda.pt2")))
""",
    "compile_cpu_pkg": LINEAR + """ep = torch.export.export(m, (torch.randn(2, 10),))
print(torch._inductor.aoti_compile_and_package(ep, package_path=os.path.join(W, "lin_cpu.pt2")))
""",
    "old_compile_cuda": LINEAR + """m = m.to("cuda")
print(torch._export.aot_compile(m, (torch.randn(2, 10, device="cuda"),),
                                options={"aot_inductor.output_path": os.path.join(W, "lin_cuda.so")}))
""",
}
JAGGED = ("LastItemGather", "TotalFromLastOffset")
for _name in JAGGED:
    COMPILES[f"jag_compile_{_name}"] = PRELUDE + f"""from torch.export import Dim
from models import VARIANTS, example
ep = torch.export.export(VARIANTS[{_name!r}]().cuda().eval(), example("cuda"),
                         dynamic_shapes=({{0: Dim.AUTO}}, {{0: Dim.AUTO}}))
print(torch._inductor.aoti_compile_and_package(ep, package_path=os.path.join(W, {_name + '.pt2'!r})))
"""

CALL = """out = run({arg})
torch.cuda.synchronize()
print("ok", out.device, tuple(out.shape))
"""
NEW = "run = torch._inductor.aoti_load_package(os.path.join(W, {pkg!r}){extra})\n"
OLD = "run = torch._export.aot_load(os.path.join(W, {pkg!r}), {dev!r})\n"
X = {"cpu": "torch.randn(2, 10)", "cuda": 'torch.randn(2, 10, device="cuda")', "batch3": 'torch.randn(3, 10, device="cuda")'}
CHECK = {"AOTI_RUNTIME_CHECK_INPUTS": "1"}


def _run(pkg: str, arg: str, extra: str = "", old: str | None = None) -> str:
    load = OLD.format(pkg=pkg, dev=old) if old else NEW.format(pkg=pkg, extra=extra)
    return PRELUDE + load + CALL.format(arg=X[arg])


# name -> (code, extra env)
RUNS = {
    "cuda_pkg_cuda_input": (_run("lin_cuda.pt2", "cuda"), {}),
    "cuda_pkg_cpu_input": (_run("lin_cuda.pt2", "cpu"), {}),
    "cuda_pkg_cpu_input_CHECK_INPUTS": (_run("lin_cuda.pt2", "cpu"), CHECK),
    "cuda_pkg_device_index_1": (PRELUDE + 'print("device_count", torch.cuda.device_count())\n'
                                + NEW.format(pkg="lin_cuda.pt2", extra=", device_index=1") + CALL.format(arg=X["cuda"]), {}),
    "cuda_pkg_wrong_batch": (_run("lin_cuda.pt2", "batch3"), {}),
    "cuda_pkg_wrong_batch_CHECK_INPUTS": (_run("lin_cuda.pt2", "batch3"), CHECK),
    "cpu_pkg_cuda_input": (_run("lin_cpu.pt2", "cuda"), {}),
    "cpu_pkg_device_index_0": (_run("lin_cpu.pt2", "cpu", ", device_index=0"), {}),
    "old_load_cuda_so_on_cpu": (_run("lin_cuda.so", "cpu", old="cpu"), {}),
    "old_load_cuda_so_cuda_cpu_input": (_run("lin_cuda.so", "cpu", old="cuda"), {}),
    "pt2_given_to_old_loader": (_run("lin_cuda.pt2", "cuda", old="cuda"), {}),
    "so_given_to_new_loader": (_run("lin_cuda.so", "cuda"), {}),
}
_JAG_CALL = PRELUDE + """from models import cases
run = torch._inductor.aoti_load_package(os.path.join(W, {pkg!r}))
out = run(*cases("cuda")[{case!r}])
torch.cuda.synchronize()
print("ok", tuple(out.shape), out.flatten().tolist()[:6])
"""
for _name, _case in (("LastItemGather", "zero_lengths"), ("TotalFromLastOffset", "empty")):
    RUNS[f"jag_run_{_name}_{_case}"] = (_JAG_CALL.format(pkg=_name + ".pt2", case=_case), {})
    RUNS[f"jag_run_{_name}_{_case}_CHECK_INPUTS"] = (_JAG_CALL.format(pkg=_name + ".pt2", case=_case), CHECK)

# lines worth keeping whole; the rest is in `tail`
_KEY = re.compile(r"^(ok |device_count|Error: |RuntimeError: |\w+Error: |\S+Error: |\[E\d+ .*Exception in aoti_torch"
                  r"|Exception raised from |.*Assertion `|Failed to destroy|torch\.\w+Error)")


def run_one(name: str, code: str, env: dict, work: str, timeout: int) -> dict:
    full = {**os.environ, **env}
    full["CXX"] = os.environ.get("AOTI_MEASURE_CXX", "/usr/bin/g++")
    full.setdefault("TORCHINDUCTOR_VEC_ISA_OK", "1")
    full.setdefault("CUDA_LAUNCH_BLOCKING", "1")
    full.setdefault("TORCHINDUCTOR_CACHE_DIR", os.path.join(work, "ic"))
    t = time.time()
    try:
        p = subprocess.run([sys.executable, "-c", code, work], capture_output=True, text=True, env=full, timeout=timeout,
                           cwd=work)
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as exc:
        rc, out, err = None, _text(exc.stdout), _text(exc.stderr) + f"\n<timeout after {timeout} s>"
    return _result(rc, out, err, time.time() - t, env, work)


def _text(b) -> str:
    return b.decode("utf-8", "replace") if isinstance(b, bytes) else (b or "")


def _result(rc, out: str, err: str, secs: float, env: dict, work: str) -> dict:
    out, err = (t.replace(work, "<work>").replace(REPO, "<repo>") for t in (out, err))
    lines = (out + err).splitlines()
    key = [ln for ln in lines if _KEY.match(ln)]
    return {"rc": rc, "signal": -rc if rc is not None and rc < 0 else None, "secs": round(secs, 1), "env": env,
            "key": key[:40], "stdout": out[-6000:], "stderr": err[-6000:]}


def migration(work: str, timeout: int) -> dict:
    """old_cuda.py and its migrated copy new_cuda.py, each in its own folder: the same output?"""
    out = {}
    for name in ("old_cuda", "new_cuda"):
        folder = os.path.join(work, name)
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(MIGRATION, name + ".py"), encoding="utf-8") as fh:
            code = fh.read()
        out[f"migration_{name}"] = run_one(name, code, {}, folder, timeout)
        out[f"migration_{name}"]["artifacts"] = sorted(os.listdir(folder))
    return out


def user_run(name: str, files: list[str], env: dict, work: str, timeout: int) -> dict:
    """tests/packages/cuda/user/<files>, run in order in a folder of their own (their paths are
    relative): the result of the last; `explain --source` is tested with these files and this text."""
    folder = os.path.join(work, name)
    os.makedirs(folder, exist_ok=True)
    res: dict = {}
    for i, f in enumerate(files):
        with open(os.path.join(USER, f), encoding="utf-8") as fh:
            res = run_one(name, fh.read(), env, folder, timeout)
        if i < len(files) - 1 and res["rc"] != 0:
            break
    res["files"] = files
    return res


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out")
    p.add_argument("--work", help="where packages are written (default: a new temporary folder)")
    p.add_argument("--jobs", type=int, default=8)
    p.add_argument("--timeout", type=int, default=240, help="seconds per scenario")
    args = p.parse_args(argv)
    import torch  # only to record the versions; scenarios run in their own processes

    work = os.path.abspath(args.work or tempfile.mkdtemp(prefix="cuda_measure_"))
    os.makedirs(work, exist_ok=True)
    meta = {"torch": torch.__version__, "cuda": torch.version.cuda,
            "device": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
            "device_count": torch.cuda.device_count(), "python": sys.version.split()[0],
            "CXX": os.environ.get("AOTI_MEASURE_CXX", "/usr/bin/g++"),
            "started": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())}
    try:
        import triton

        meta["triton"] = triton.__version__
    except ImportError:
        meta["triton"] = None
    results: dict = {"_meta": meta}
    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        jobs = {n: pool.submit(run_one, n, c, {}, work, args.timeout * 2) for n, c in COMPILES.items()}
        jobs["migration"] = pool.submit(migration, work, args.timeout * 2)
        users = {n: pool.submit(user_run, n, f, e, work, args.timeout * 2) for n, (f, e) in USER_RUNS.items()}
        for n in COMPILES:
            results[n] = jobs[n].result()
            print(n, results[n]["rc"], results[n]["secs"], flush=True)
        runs = {n: pool.submit(run_one, n, c, e, work, args.timeout) for n, (c, e) in RUNS.items()}
        for n, job in runs.items():
            results[n] = job.result()
            print(n, results[n]["rc"], results[n]["key"][-1:] if results[n]["key"] else "", flush=True)
        results.update(jobs["migration"].result())
        for n, job in users.items():
            results[n] = job.result()
            print(n, results[n]["rc"], results[n]["key"][-1:] if results[n]["key"] else "", flush=True)
    same = results["migration_old_cuda"]["stdout"] == results["migration_new_cuda"]["stdout"]
    meta["migration_same_output"] = same and results["migration_old_cuda"]["rc"] == 0
    meta["ended"] = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump(results, fh, indent=1, sort_keys=True)
    print("migration: same output" if meta["migration_same_output"] else "migration: DIFFERENT output", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
