"""Shared body of the deprecated-API rules (AOTI001, AOTI002): the symbols are data
(data/deprecated.toml), the migration is planned per artifact (fixes/plan.py): the compile's
finding and each loader's carry the same fix."""

from __future__ import annotations

from aoti_lsp.deprecations import for_code
from aoti_lsp.findings import Applicability, Finding, Fix, Related
from aoti_lsp.fixes.migrate import CannotFix, drop_import_name, uses_outside
from aoti_lsp.fixes.plan import migration
from aoti_lsp.names import IMPORT
from aoti_lsp.rules import Rule


class DeprecatedCall(Rule):
    deprecated = True

    def message(self, qualname: str, symbol) -> str:
        raise NotImplementedError

    def check(self, ctx):
        symbols = for_code(self.code)
        calls = ctx.calls_to(set(symbols))
        for call, qualname in calls:
            func = call.child_by_field_name("function")
            message = self.message(qualname, symbols[qualname])
            fix, related = None, []
            if not call.has_error:
                try:
                    fix = migration(ctx, call)
                except CannotFix as why:
                    related.append(Related(func.start_byte, func.end_byte, f"no automatic fix: {why}"))
            yield Finding(self.code, message, func.start_byte, func.end_byte, fix=fix, deprecated=True, related=related)

        # after a migration the old import may be left with no use (fix-all migrates every
        # call in one pass, and each call's fix kept the import for the others)
        for name, bindings in ctx.names.module.bindings.items():
            for b in bindings:
                if b.kind == IMPORT and b.target in symbols and b.stmt is not None and not uses_outside(ctx.source, b.stmt, name):
                    node = next((n for n in _import_names(b.stmt) if n[0] == name), None)
                    start, end = node[1] if node else (b.stmt.start_byte, b.stmt.end_byte)
                    yield Finding(
                        self.code, f"`{b.target}` is deprecated and imported but never used: remove the import",
                        start, end, deprecated=True, unnecessary=True,
                        fix=Fix(f"Remove unused import of {b.target}", (drop_import_name(ctx.source, b.stmt, name),),
                                Applicability.SAFE),
                    )


def _import_names(stmt):
    for n in stmt.children_by_field_name("name"):
        alias = n.child_by_field_name("alias") if n.type == "aliased_import" else None
        yield ((alias or n).text.decode(), (n.start_byte, n.end_byte))
