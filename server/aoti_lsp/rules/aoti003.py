import os

from aoti_lsp.analysis.facts import NEW_LOAD
from aoti_lsp.analysis.findings import Finding, Related, Severity
from aoti_lsp.fixes.migrate import CannotFix
from aoti_lsp.fixes.plan import migration
from aoti_lsp.rules import Rule


class PackageLoaderGivenSo(Rule):
    code = "AOTI003"
    name = "package-loader-given-so"
    summary = "`aoti_load_package` is given a `.so`: it loads only `.pt2` packages"
    severity = Severity.ERROR
    triggers = ("aoti_load_package", "load_package")
    explanation = """\
`torch._inductor.aoti_load_package` (and `torch._inductor.package.load_package`) open a `.pt2`
package, a zip. A `.so` written by the deprecated `aot_compile` is not one: torch 2.13 fails with
`RuntimeError: Failed to initialize zip archive: failed finding central directory`. This is what
a half-done migration leaves behind: the loader was switched to the new API, the compile (or the
path constant) was not.

Reported when the path given to the loader ends in `.so`: a literal, a constant of the file, a
constant of another module of the project (`from pkg.paths import TOWER`), or a path that an
`aot_compile` of the project writes (`aot_inductor.output_path`)."""
    fix_explanation = """\
When an `aot_compile` of the project writes that `.so`, the fix is the whole migration of the
artifact (the same as AOTI001's): the compile becomes `torch.export.export` +
`aoti_compile_and_package`, every old loader becomes `aoti_load_package`, and the text the path
ends with becomes `.pt2` wherever it is spelt, in every file. Unsafe: applied with
`--unsafe-fixes`. Without such a compile there is no fix: produce a `.pt2` with
`aoti_compile_and_package` first."""
    invalid = (
        "import torch\nrunner = torch._inductor.aoti_load_package('model.so')\n",
        "import torch\nOUT = 'out/model.so'\n"
        "torch._export.aot_compile(m, (x,), options={'aot_inductor.output_path': OUT})\n"
        "runner = torch._inductor.aoti_load_package(OUT)\n",
    )
    valid = (
        "import torch\nrunner = torch._inductor.aoti_load_package('model.pt2')\n",
        "import torch\nrunner = torch._export.aot_load('model.so', 'cpu')\n",
    )

    def check(self, ctx):
        facts = ctx.facts
        for load in facts.loads:
            if load.qualname not in NEW_LOAD or load.path_node is None:
                continue
            at = load.call.start_byte
            key = facts.resolve_key(facts.path_key(load.path_node, at))
            name = os.path.basename(key) if key and not key.startswith("@") else _tail_text(ctx, load)
            if not name or not name.endswith(".so"):
                continue
            message = f"`{name}` given to `{load.qualname.rsplit('.', 1)[-1]}`: it loads only `.pt2` packages"
            fix, related = None, []
            node = load.path_node
            try:
                fix = migration(ctx, load.call)
            except CannotFix as why:
                related.append(Related(node.start_byte, node.end_byte, f"no automatic fix: {why}"))
            yield Finding(self.code, message, node.start_byte, node.end_byte, fix=fix, related=related,
                          severity=self.severity)


def _tail_text(ctx, load) -> str | None:
    """The text a path ends with (`"tower.so"`), here or in the module that defines it."""
    tail = ctx.facts.tail(load.path_node, load.call.start_byte)
    if isinstance(tail, tuple):
        return ctx.source.data[tail[0]:tail[1]].decode()
    if isinstance(tail, str) and ctx.project is not None:
        found = ctx.project.tail(tail)
        other = ctx.project.context(found[0]) if found else None
        if other is not None:
            return other.source.data[found[1]:found[2]].decode()
    return None


RULE = PackageLoaderGivenSo()
