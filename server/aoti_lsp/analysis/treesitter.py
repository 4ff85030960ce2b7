"""tree-sitter's classes, read from its extension module without running the package's
__init__ where typing is not imported yet: that __init__ imports typing for one Protocol (~2 ms
of a one-file check; cf. grammar.py). They are the package's own classes (it re-exports them),
and a later `import tree_sitter` runs its __init__, which finds the extension loaded."""

from __future__ import annotations

import sys


def _binding():
    if "tree_sitter" not in sys.modules and "typing" not in sys.modules:  # else it saves nothing
        from aoti_lsp import find_spec

        try:
            spec = find_spec("tree_sitter")
            if spec is not None and spec.submodule_search_locations:
                package = type(sys)("tree_sitter")  # the package, its __init__ not run
                package.__spec__, package.__path__ = spec, list(spec.submodule_search_locations)
                sys.modules["tree_sitter"] = package
                try:
                    __import__("tree_sitter._binding")
                    return sys.modules["tree_sitter._binding"]
                finally:
                    del sys.modules["tree_sitter"]
        except (ImportError, AttributeError, OSError):
            pass  # laid out otherwise: the package's own way
    import tree_sitter

    return tree_sitter


_ts = _binding()
Language, Node, Parser, Query, QueryCursor, Tree = _ts.Language, _ts.Node, _ts.Parser, _ts.Query, _ts.QueryCursor, _ts.Tree
