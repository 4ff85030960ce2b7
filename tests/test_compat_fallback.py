"""Old-API calls kept for older torch beside the new path (analysis/compat.py): no AOTI001/002,
and the same call outside such a fallback is still reported (the twins). Shapes from public code."""

import textwrap

import pytest

from aoti_lsp.analysis.engine import analyze
from aoti_lsp.analysis.source import Source
from aoti_lsp.project.config import Config



FALLBACKS = {
    # MACE-ICTD: the new loader tried in a loop over loader names, the old one after it
    "try_in_a_loop_returns": """
        import torch
        def load(path, device):
            last = None
            for loader in ("aoti_load_package",):
                try:
                    from torch._inductor import aoti_load_package
                    return aoti_load_package(path)
                except Exception as e:
                    last = e
            from torch._export import aot_load
            return aot_load(path, device)
    """,
    "hasattr_else": """
        import torch
        def build(gm, args):
            if hasattr(torch._inductor, "aoti_compile_and_package"):
                pkg = torch._inductor.aoti_compile_and_package(torch.export.export(gm, args), package_path="/tmp/a.pt2")
                return torch._inductor.aoti_load_package(pkg)
            else:
                so = torch._export.aot_compile(gm, args, options={"aot_inductor.output_path": "/tmp/a.so"})
                return torch._export.aot_load(so, "cuda")
    """,
    "not_hasattr": """
        import torch
        def load(p):
            if not hasattr(torch._inductor, "aoti_load_package"):
                return torch._export.aot_load(p, "cuda")
            return torch._inductor.aoti_load_package(p)
    """,
    "except_import_error": """
        def load(p):
            try:
                from torch._inductor import aoti_load_package
                return aoti_load_package(p)
            except ImportError:
                from torch._export import aot_load
                return aot_load(p, "cuda")
    """,
    "after_a_try_that_returns": """
        def load(p, device):
            last = None
            try:
                from torch._inductor import aoti_load_package
                return aoti_load_package(p)
            except Exception as e:
                last = e
            try:
                from torch._export import aot_load
                return aot_load(p, device)
            except Exception as e:
                raise RuntimeError(f"no AOTI loader ({last} / {e})")
    """,
}

# the same calls where the old API is the main path: reported
PRIMARY = {
    # the same broken import in a `try` that returns, the old call after it
    "broken_new_import_then_old": ("""
        import torch
        def load(p):
            try:
                from torch._inductor.aoti_load_package import aoti_load_package
                return aoti_load_package(p)
            except ImportError:
                pass
            return torch._export.aot_load(p, "cpu")
    """, 1),
    # its twin: the loop tries the new loader but never returns it, so the old one always runs
    "loop_without_return": ("""
        import torch
        def load(path, device):
            for loader in ("aoti_load_package",):
                try:
                    from torch._inductor import aoti_load_package
                    print(aoti_load_package)
                except Exception:
                    pass
            return torch._export.aot_load(path, device)
    """, 1),
    # inductor-rs: the `try` imports the new function as a module, which always fails, so the
    # `except ImportError:` branch is the path that always runs
    "broken_new_import": ("""
        import torch
        def build(ep, x, out):
            try:
                from torch._inductor.aoti_compile_and_package import aoti_compile_and_package
                return aoti_compile_and_package(ep, package_path=out)
            except ImportError:
                from torch._inductor import aot_compile
                return aot_compile(ep.module(), (x,))
    """, 1),
    "broken_new_import_plain": ("""
        import torch
        def load(p):
            try:
                import torch._inductor.aoti_load_package
                return torch._inductor.aoti_load_package(p)
            except ImportError:
                return torch._export.aot_load(p, "cpu")
    """, 1),
    "old_first_new_in_except": ("""
        import torch
        def load(p):
            try:
                return torch._export.aot_load(p, "cuda")
            except ImportError:
                return torch._inductor.aoti_load_package(p)
    """, 1),
    "try_without_return": ("""
        import torch
        def load(p, q):
            try:
                a = torch._inductor.aoti_load_package(p)
            except ImportError:
                a = None
            b = torch._export.aot_load(q, "cuda")
            return a, b
    """, 1),
    "hasattr_of_something_else": ("""
        import torch
        def build(gm, args):
            if hasattr(torch, "compile"):
                return torch.compile(gm)
            else:
                so = torch._export.aot_compile(gm, args)
                return torch._export.aot_load(so, "cuda")
    """, 2),
    "module_level_after_new_use": ("""
        import torch
        a = torch._inductor.aoti_load_package("a.pt2")
        b = torch._export.aot_load("b.so", "cuda")
    """, 1),
}


def _count(text: str) -> int:
    src = Source.from_text(textwrap.dedent(text).lstrip(), "m.py")
    return sum(f.code in ("AOTI001", "AOTI002") and "imported but never used" not in f.message
               for f in analyze(src, Config()).findings)


@pytest.mark.parametrize("name", FALLBACKS)
def test_a_compat_fallback_is_not_reported(name):
    assert _count(FALLBACKS[name]) == 0


@pytest.mark.parametrize("name", PRIMARY)
def test_the_old_api_as_the_main_path_is_still_reported(name):
    text, expected = PRIMARY[name]
    assert _count(text) == expected


def test_an_option_choosing_the_old_output_is_not_a_fallback():
    """torchchat's `if package: aoti_compile_and_package(...) else: aot_compile(...)`: the .so is
    an output a user asks for (a C++ runner loads it), not code for older torch."""
    assert _count("""
        import torch
        def export(ep, args, package, options):
            if package:
                return torch._inductor.aoti_compile_and_package(ep, package_path="m.pt2")
            else:
                return torch._inductor.aot_compile(ep.module(), args, options=options)
    """) == 1
