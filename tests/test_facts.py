"""The facts layer (facts.py, project.py): def-use, runner calls however the runner travels,
constants across modules, and a cost that stays linear in the code."""

import os
import signal
import textwrap


from aoti_lsp.analysis import names
from aoti_lsp.project.config import Config
from aoti_lsp.analysis.engine import Context, analyze
from aoti_lsp.project.project import Project, summarize
from aoti_lsp.analysis.source import Source


def facts(text, path="<string>", project=None):
    return Context(Source.from_text(textwrap.dedent(text), path), Config(), project).facts


def called_lines(f):
    src = f.src
    return [[src.lines.line_of(c.start_byte) + 1 for c in f.runner_calls(load)] for load in f.loads]


def test_runner_on_the_instance_called_from_another_method():
    f = facts("""
        import torch
        class Scorer:
            def __init__(self, path):
                self.runner = torch._inductor.aoti_load_package(path)
            def score(self, x):
                return self.runner(x)
            def other(self, y):
                r = self.runner
                return r(y)
    """)
    assert called_lines(f) == [[7, 10]]


def test_attribute_set_to_something_else_too_is_not_followed():
    f = facts("""
        import torch
        class Scorer:
            def __init__(self, path):
                self.runner = torch._inductor.aoti_load_package(path)
            def swap(self, other):
                self.runner = other
            def score(self, x):
                return self.runner(x)
    """)
    assert called_lines(f) == [[]]


def test_lazy_module_global_and_returned_runner():
    f = facts("""
        import torch
        _runner = None
        def get():
            global _runner
            if _runner is None:
                _runner = torch._inductor.aoti_load_package("m.pt2")
            return _runner
        def predict(x):
            a = get()(x)
            r = get()
            return r(x), _runner(x)
    """)
    assert called_lines(f) == [[10, 12, 12]]


def test_global_also_set_to_another_value_is_not_followed():
    f = facts("""
        import torch
        _runner = None
        def get():
            global _runner
            _runner = torch._inductor.aoti_load_package("m.pt2")
        def reset():
            global _runner
            _runner = make_other()
        def predict(x):
            return _runner(x)
    """)
    assert called_lines(f) == [[]]


def test_helper_returning_a_runner_and_its_parameter_default():
    f = facts("""
        import torch
        OUT = "out/m.pt2"
        def load_scorer(path=OUT):
            return torch._inductor.aoti_load_package(path)
        scorer = load_scorer()
        scorer(1)
    """)
    assert called_lines(f) == [[7]]
    load = f.loads[0]
    assert f.path_key(load.path_node, load.call.start_byte) == "out/m.pt2"


def test_module_level_reassignment_keeps_def_use_order():
    f = facts("""
        import torch
        runner = torch._inductor.aoti_load_package("a.pt2")
        runner(1)
        runner = torch._inductor.aoti_load_package("b.pt2")
        runner(2)
    """)
    assert called_lines(f) == [[4], [6]]


def test_global_at_module_level_does_not_hang():
    def boom(*_):
        raise TimeoutError("name lookup hangs on a module-level `global`")

    old = signal.signal(signal.SIGALRM, boom)
    signal.alarm(10)
    try:
        result = analyze(Source.from_text("global torch\nimport torch\nr = torch._export.aot_load('m.so', 'cpu')\n"))
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    assert [f.code for f in result.findings] == ["AOTI002"]


def _write(root, files):
    for rel, text in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as fh:
            fh.write(textwrap.dedent(text))


def test_constants_resolve_across_modules(tmp_path):
    _write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/paths.py": """
            import os
            ARTIFACT_DIR = os.path.join(os.path.dirname(__file__), "artifacts")
            TOWER = os.path.join(ARTIFACT_DIR, "tower.pt2")
            RELATIVE = "models/" + "x.pt2"
        """,
        "pkg/a.py": "from pkg.paths import TOWER\nimport torch\nr = torch._inductor.aoti_load_package(TOWER)\n",
        "pkg/b.py": "from .paths import TOWER\nimport torch\nr = torch._inductor.aoti_load_package(TOWER)\n",
        "pkg/c.py": "import pkg.paths as P\nimport torch\nr = torch._inductor.aoti_load_package(P.RELATIVE)\n",
        "pkg/d.py": "from pkg.nowhere import X\nimport torch\nr = torch._inductor.aoti_load_package(X)\n",
    })
    project = Project(root=str(tmp_path))
    keys = {}
    for name in "abcd":
        path = str(tmp_path / "pkg" / f"{name}.py")
        f = Context(Source(open(path, "rb").read(), path), Config(), project).facts
        load = f.loads[0]
        keys[name] = f.resolve_key(f.path_key(load.path_node, load.call.start_byte))
    tower = str(tmp_path / "pkg" / "artifacts" / "tower.pt2")
    assert keys == {"a": tower, "b": tower, "c": "models/x.pt2", "d": None}


def test_artifact_graph_links_compile_and_loads_across_files(tmp_path):
    _write(tmp_path, {
        "paths.py": "TOWER = 'artifacts/tower.pt2'\n",
        "build.py": "import torch\nfrom paths import TOWER\n"
                    "torch._inductor.aoti_compile_and_package(ep, package_path=TOWER)\n",
        "serve.py": "import torch\nfrom paths import TOWER\nr = torch._inductor.aoti_load_package(TOWER)\n",
    })
    project = Project(root=str(tmp_path))
    for name in ("build.py", "serve.py"):
        path = str(tmp_path / name)
        project.update(path, summarize(Source(open(path, "rb").read(), path)))
    graph = project.artifact_sites()
    assert sorted((os.path.basename(p), kind) for p, kind, _ in graph["artifacts/tower.pt2"]) == [
        ("build.py", "compile"), ("serve.py", "load")]


def _sites(n: int) -> str:
    out = ["import torch", "from torch._inductor import aoti_compile_and_package, aoti_load_package", ""]
    for i in range(n):
        out += [f"def site_{i}(model):", "    x = torch.randn(4, 8, device='cuda')",
                "    ep = torch.export.export(model, (x,))",
                f"    runner = aoti_load_package(aoti_compile_and_package(ep, package_path='m{i}.pt2'))",
                "    return runner(torch.randn(4, 8))", "",
                f"runner = aoti_load_package('m{i}.pt2')", "runner(torch.ones(4, 8))", ""]
    return "\n".join(out) + "\n"


def test_def_use_work_is_linear_in_the_sites():
    """Counted, not timed: binding look-ups per site stay flat when the file grows 4x (a
    rescan of every binding of `runner` for each use made this quadratic)."""
    def lookups(n):
        before = names.LOOKUPS[0]
        result = analyze(Source.from_text(_sites(n), "big.py"))
        assert len([f for f in result.findings if f.code == "AOTI102"]) == 2 * n  # the work was really done
        return names.LOOKUPS[0] - before

    small, large = lookups(50), lookups(200)
    assert large <= 4 * small * 1.25, (small, large)


def test_a_path_returned_by_a_helper_is_followed():
    f = facts("""
        import os, torch
        ROOT = "/srv"
        def artifact_path():
            \"\"\"Where the package goes.\"\"\"
            return os.path.join(ROOT, "tower.pt2")
        def other(name):
            return name
        r = torch._inductor.aoti_load_package(artifact_path())
        s = torch._inductor.aoti_load_package(other("x.pt2"))
    """)
    keys = [f.path_key(l.path_node, l.call.start_byte) for l in f.loads]
    assert keys == ["/srv/tower.pt2", None]


def test_string_values_read_off_the_text_are_what_python_reads():
    """string_value reads a literal with nothing to unescape off its text: always what
    ast.literal_eval says (or None where Python rejects the literal)."""
    import ast

    from aoti_lsp.analysis.facts import string_value
    from aoti_lsp.analysis.source import descendants

    literals = ["'a'", '"m.pt2"', "''", '""', "''''''", "'''a\nb'''", '"""a"b"""', "r'a\\b'", "R'x'", "u'é'",
                "U'x'", "'a\\'b'", "'a\\nb'", "'''a\r\nb'''", "\"tab\there\"", "'caf\u00e9 \u2603'", "rb'x'", "f'x'",
                "'{x}'", "'a' 'b'", "'a' \"b\""]
    for text in literals:
        source = Source((f"x = {text}\n").encode(), "m.py")
        node = source.tree.root_node.named_children[0].named_children[0].child_by_field_name("right")
        try:
            want = ast.literal_eval(text.replace("\r\n", "\n"))
        except (ValueError, SyntaxError):
            want = None
        if text.startswith(("rb", "f")):
            want = None
        assert string_value(node) == (want if isinstance(want, str) else None), text
    broken = Source(b"x = 'abc\n", "m.py")
    for node in descendants(broken.tree.root_node, "string"):
        assert string_value(node) is None


def test_names_found_in_one_pass_are_found_where_one_scan_each_finds_them():
    """Source.find_words (one regex pass, a trie of the names) gives every name the offsets
    word_occurrences finds with a scan of its own: prefixes of each other, dots, underscores,
    names inside longer ones, strings, non-ASCII neighbours."""
    import random

    rng = random.Random(7)
    names = ["a", "ab", "abc", "a_b", "b", "ba", "x1", "x10", "x100", "_x", "x_", "runner", "runners", "RUNNER_6",
             "RUNNER_60", "ep", "step"]
    pieces = names + [".", " ", "_", "\n", "é", "(", ")", "'", "0", "z"]
    for _ in range(200):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(1, 60))).encode()
        one, batch = Source(text, "m.py"), Source(text, "m.py")
        batch.find_words(names)
        for name in names:
            for after_dot in (True, False):
                assert list(batch.word_occurrences(name, after_dot)) == list(one.word_occurrences(name, after_dot)), \
                    (text, name, after_dot)


def test_text_scans_stay_flat_when_the_sites_grow():
    """Counted, not timed: passes over the whole text (a bytes.find loop, a find_words pass) per
    summary and check stay flat when the file has 4x the sites. One pass per name that a load's
    value is assigned to made the cost quadratic: twice the sites, twice the names, each a scan of
    twice the text."""
    import differential
    from aoti_lsp.analysis import source

    def scans(sites):
        path = "/project/big.py"
        src = Source(differential.generated_source(sites, sites * 18).encode(), path)
        before = source.SCANS[0]
        project = Project(root="/project")
        project.update(path, summarize(src))
        assert analyze(src, project=project).findings  # the work was really done
        return source.SCANS[0] - before

    small, large = scans(60), scans(240)
    assert large <= small + 2, (small, large)


def _value_at(f, name, line):
    """The value `name` holds where it is read on `line` (1-based), as text, or None."""
    src = f.src
    ident = next(i for i in f.idents(name) if src.lines.line_of(i.start_byte) + 1 == line)
    found = f.binding_value(ident, ident.start_byte)
    return src.node_text(found[0]) if found is not None else None


def test_a_name_read_in_its_own_assignment_is_the_earlier_binding():
    """`so_path = aot_compile(..., output_path=so_path)`: Python binds the name after the value
    runs, so the read inside it is the path (nfdi-demonstrator); it was read as the call itself."""
    f = facts("""
        import os
        def build(model, x):
            so_path = os.path.join("models", "net.so")
            so_path = compile(model, so_path)
            return so_path
    """)
    assert _value_at(f, "so_path", 5) == 'os.path.join("models", "net.so")'
    assert _value_at(f, "so_path", 6) == "compile(model, so_path)"


def test_a_plain_assignment_in_a_try_and_its_handler_is_read_in_each_branch():
    """Not an import shim: a cache probed in the body and rebuilt in the handler. A read in each
    branch sees its own assignment; a read after the try, either (unknown)."""
    f = facts("""
        import os
        def load(name):
            try:
                p = os.path.join("cache", f"{name}.so")
                use(p)
            except Exception:
                p = os.path.join("built", f"{name}.so")
                use(p)
            use(p)
    """)
    assert _value_at(f, "p", 6) == 'os.path.join("cache", f"{name}.so")'
    assert _value_at(f, "p", 9) == 'os.path.join("built", f"{name}.so")'
    assert _value_at(f, "p", 10) is None


def test_an_import_shim_stays_unknown():
    f = facts("""
        try:
            from fast import loads
        except ImportError:
            loads = None
        loads(x)
    """)
    ident = f.idents("loads")[-1]
    assert f.binding_value(ident, ident.start_byte) is None
    assert f.names.resolve(ident) is None


def test_a_value_assigned_in_a_try_without_except_is_known_after_it():
    """`try: so = aot_compile(...) finally: restore()`: the code after the try runs only once the
    body did (inference-benchmarks restores inductor flags in the finally). With an `except`, the
    handler may have run instead: unknown."""
    f = facts("""
        def build(p):
            try:
                so = make(p)
            finally:
                restore()
            use(so)
            try:
                other = make(p)
            except OSError:
                pass
            use(other)
    """)
    assert _value_at(f, "so", 7) == "make(p)"
    assert _value_at(f, "other", 12) is None
