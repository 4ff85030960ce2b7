"""tree-sitter's Python grammar, read from its package's extension module without running the
package's __init__: that imports importlib.resources (tempfile, shutil, typing: ~3 ms of a
one-file check) for query files the analysis never reads. The finder and loader are the import
system's own (_frozen_importlib_external, always loaded by CPython): the importlib package imports warnings."""

from __future__ import annotations

import sys

try:
    import _frozen_importlib_external as machinery  # importlib.machinery's PathFinder and ExtensionFileLoader
except ImportError:  # an interpreter whose import system is laid out otherwise
    import importlib.machinery as machinery

from aoti_lsp import find_spec


def language():
    """tree_sitter_python.language(): the grammar's pointer."""
    if "tree_sitter_python" not in sys.modules:
        try:
            package = find_spec("tree_sitter_python")
            spec = machinery.PathFinder.find_spec("tree_sitter_python._binding",
                                                  list(package.submodule_search_locations))
            if spec is not None and isinstance(spec.loader, machinery.ExtensionFileLoader):
                module = spec.loader.create_module(spec)  # what module_from_spec does for an extension
                spec.loader.exec_module(module)
                return module.language()
        except (ImportError, AttributeError, TypeError, OSError):
            pass  # laid out otherwise: the package's own way
    import tree_sitter_python

    return tree_sitter_python.language()
