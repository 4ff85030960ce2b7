"""tree-sitter's classes, read from its extension module without running the package's
__init__ where typing is not imported yet: that __init__ imports typing for one Protocol (~2 ms
of a one-file check; cf. grammar.py). They are the package's own classes (it re-exports them),
and a later `import tree_sitter` runs its __init__, which finds the extension loaded.
The extension takes `re.compile` when it loads (for a query's #match? predicates, which no
query of ours has): it is given a stand-in that imports `re` on its first call, since `re`
costs ~5 ms of a ~55 ms one-file check that may need no regular expression at all."""

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
                stand_in = None
                if "re" not in sys.modules:
                    stand_in = sys.modules["re"] = type(sys)("re")
                    stand_in.compile = _compile
                try:
                    __import__("tree_sitter._binding")
                    return sys.modules["tree_sitter._binding"]
                finally:
                    del sys.modules["tree_sitter"]
                    if stand_in is not None and sys.modules.get("re") is stand_in:
                        del sys.modules["re"]
        except (ImportError, AttributeError, OSError):
            pass  # laid out otherwise: the package's own way
    import tree_sitter

    return tree_sitter


def _compile(*args, **kwargs):
    import re  # the real module: the stand-in left sys.modules once the extension had loaded

    return re.compile(*args, **kwargs)


_ts = _binding()
Language, Node, Parser, Query, QueryCursor, Tree = _ts.Language, _ts.Node, _ts.Parser, _ts.Query, _ts.QueryCursor, _ts.Tree
