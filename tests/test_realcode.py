"""scripts/realcode.py: diff reading, scoring, and one run on a bare repository made here."""
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("realcode", ROOT / "scripts" / "realcode.py")
realcode = importlib.util.module_from_spec(spec)
sys.modules["realcode"] = realcode
spec.loader.exec_module(realcode)

DIFF = """\
--- a/pkg/export.py
+++ b/pkg/export.py
@@ -3,6 +3,9 @@
 ds = {"x": {0: batch}}
 with torch.no_grad():
-    so = torch._export.aot_compile(model, (x,), dynamic_shapes=ds)
+    ep = torch.export.export(model, (x,), strict=True)
+    so = torch._inductor.aoti_compile_and_package(ep)
 print(so)
-runner = torch._export.aot_load(so, "cpu")
+runner = torch._inductor.aoti_load_package(so)
 runner(x)
"""


def site(line, api="torch._export.aot_compile", label="migrate", **kw):
    return {"id": f"s{line}", "repo": "o/r", "commit": "0" * 40, "path": "pkg/export.py", "line": line,
            "api": api, "label": label, **kw}


def test_parse_diff_numbers_old_lines(tmp_path):
    hunks = realcode.parse_diff(tmp_path, DIFF)["pkg/export.py"]
    assert len(hunks) == 1
    assert sorted(hunks[0].removed) == [5, 7]
    assert "aoti_load_package" in hunks[0].added[-1]
    assert hunks[0].new[0].startswith("ds = ")


def test_a_migration_that_drops_dynamic_shapes_is_wrong(tmp_path):
    hunks = realcode.parse_diff(tmp_path, DIFF)
    r = realcode.score_site(site(5), tmp_path, {}, hunks)
    assert (r["outcome"], r["verdict"]) == ("migrated", "wrong")
    assert "drops dynamic_shapes" in r["detail"]
    # the loader in the same hunk is not blamed for its compile's fault
    r = realcode.score_site(site(7, api="torch._export.aot_load", forbid=["device_index"]), tmp_path, {}, hunks)
    assert r["verdict"] == "migrated-correctly"


def test_reexport_of_module_is_wrong_even_across_lines(tmp_path):
    diff = DIFF.replace("torch.export.export(model, (x,)", "torch.export.export(\n+        ep0.module(), (x,)")
    diff = diff.replace("dynamic_shapes=ds)", ")")
    r = realcode.score_site(site(5), tmp_path, {}, realcode.parse_diff(tmp_path, diff))
    assert r["verdict"] == "wrong" and "re-exports" in r["detail"]


def test_migrating_a_refuse_site_is_wrong_and_refusing_a_migrate_site_is_refused_wrongly(tmp_path):
    hunks = realcode.parse_diff(tmp_path, DIFF)
    assert realcode.score_site(site(7, api="torch._export.aot_load", label="refuse", reason="cross-process"),
                               tmp_path, {}, hunks)["verdict"] == "wrong"
    finding = {"code": "AOTI001", "fix": None, "related": [
        {"message": "no automatic fix: the artifact path `p` is computed at run time"}]}
    at = {("pkg/export.py", 9): [finding]}
    r = realcode.score_site(site(9), tmp_path, at, hunks)
    assert (r["outcome"], r["verdict"], r["tool_reason_kind"]) == ("refused", "refused-wrongly", "computed-path")
    assert realcode.score_site(site(12), tmp_path, at, hunks)["verdict"] == "missed"


def git(*args, cwd):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def mirror(tmp_path):
    work = tmp_path / "work"
    (work / "app").mkdir(parents=True)
    (work / "app" / "one.py").write_text(
        "import torch\n"
        "so = torch._export.aot_compile(M(), (x,), options={'aot_inductor.output_path': 'm.so'})\n"
        "runner = torch._export.aot_load(so, 'cpu')\n")
    (work / "app" / "cli.py").write_text(
        "import sys, torch\n"
        "torch._export.aot_compile(M(), (x,), options={'aot_inductor.output_path': sys.argv[1]})\n")
    git("init", "-q", cwd=work)
    git("add", ".", cwd=work)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x", cwd=work)
    commit = git("rev-parse", "HEAD", cwd=work)
    git("clone", "-q", "--bare", str(work), str(tmp_path / "mirror" / "o+r" / "repo"), cwd=tmp_path)
    return tmp_path / "mirror", commit


def test_run_on_a_bare_mirror(mirror, tmp_path, capsys):
    path, commit = mirror
    labels = tmp_path / "labels.toml"
    labels.write_text("".join(
        f'[[site]]\nid = "{i}"\nrepo = "o/r"\ncommit = "{commit}"\npath = "app/{f}"\nline = {n}\n'
        f'api = "torch._export.{api}"\nlabel = "{label}"\n' + (f'reason = "{why}"\n' if why else "") + "\n"
        for i, f, n, api, label, why in [
            ("one-compile", "one.py", 2, "aot_compile", "migrate", ""),
            ("argv", "cli.py", 2, "aot_compile", "refuse", "cross-process"),
            ("nothing", "cli.py", 1, "aot_compile", "migrate", "")]))
    out_json = tmp_path / "r.json"
    assert realcode.main(["--labels", str(labels), "--mirror", str(path), "--json", str(out_json)]) == 0
    out = capsys.readouterr().out
    import json
    got = {r["id"]: r for r in json.loads(out_json.read_text())}
    assert got["one-compile"]["verdict"] == "migrated-correctly"
    # a path from argv: offered in the editor only, with what must change outside (never by --fix)
    assert got["argv"]["outcome"] == "refused" and "offered (display-only)" in got["argv"]["detail"]
    assert got["argv"]["verdict"] == "refused-correctly"
    assert got["nothing"]["verdict"] == "missed"
    assert "3 sites in 1 repositories" in out


def test_usage_errors_exit_2(tmp_path, mirror):
    path, _ = mirror
    assert realcode.main(["--mirror", str(tmp_path / "none")]) == 2
    assert realcode.main(["--labels", str(tmp_path / "missing.toml"), "--mirror", str(path)]) == 2
    assert realcode.main(["--mirror", str(path)]) == 2  # the real labels' repositories are not in it


def test_fetch_list_names_every_labelled_repository(capsys):
    assert realcode.main(["--fetch-list"]) == 0
    listed = capsys.readouterr().out.split()
    sites = realcode.load_sites(realcode.LABELS)
    repos = {s["repo"] for s in sites if not s.get("unfetchable")}
    assert {f"github:{r}" for r in repos} == set(listed) and len(repos) >= 8
    # one that cannot be fetched here is labelled, and never asked for
    by_hand = {s["repo"] for s in sites if s.get("unfetchable")}
    assert by_hand and not by_hand & repos and not {f"github:{r}" for r in by_hand} & set(listed)
