"""Names.scope_of finds a scope by byte range (names.py); climbing `.parent` is the reference:
both must give the same scope chain for every node, asked in any order."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from aoti_lsp.analysis.names import Names
from aoti_lsp.analysis.source import descendants, parser

ROOT = Path(__file__).resolve().parent
TRICKY = [
    b"f = lambda: (lambda y: y)(1)\n",
    b"def f(a=lambda: 1):\n    class C(B):\n        def g(self): return lambda q: q\n",
    b"def\n", b"def f(:\n  x = 1\nclass", b"x = 'def lambda class'\n# def x\nlambda_ = 1\n",
    b"@d(lambda: 1)\nasync def f():\n    pass\n", b"(lambda: x)\n", b"def f(): pass", b"class A: x = lambda: y",
    b"class A(B, metaclass=lambda *a: a):\n    def f(self, x=def_): return x\n",
]


def _sources():
    files = sorted((ROOT / "fixtures").rglob("*.py"))[:40] + sorted((ROOT.parent / "server" / "aoti_lsp" / "analysis").glob("*.py"))
    return [f.read_bytes() for f in files] + TRICKY


def _chain(scope):
    out = []
    while scope is not None:
        out.append((scope.node.id, scope.kind))
        scope = scope.parent
    return out


@pytest.mark.parametrize("data", _sources(), ids=lambda d: str(len(d)))
def test_scope_by_range_is_the_climbs(data):
    tree = parser().parse(data)
    nodes = list(descendants(tree.root_node))
    random.Random(len(data)).shuffle(nodes)
    climbed, ranged = Names(tree.root_node), Names(tree.root_node)
    for node in nodes:
        assert _chain(ranged.scope_of(node)) == _chain(climbed._climb(node)), (node.type, node.start_point)
