"""Shared body of the deprecated-API rules (AOTI001, AOTI002): the symbols are data
(data/deprecated.toml), the migration is fixes/migrate.py."""

from __future__ import annotations

from aoti_lsp.deprecations import deprecated_symbols, for_code
from aoti_lsp.findings import Finding
from aoti_lsp.fixes.migrate import CannotFix
from aoti_lsp.rules import Rule


class DeprecatedCall(Rule):
    deprecated = True

    def fix(self, ctx, call, qualname, other_calls):
        raise NotImplementedError

    def message(self, qualname: str, symbol) -> str:
        raise NotImplementedError

    def check(self, ctx):
        symbols = for_code(self.code)
        calls = ctx.calls_to(set(symbols))
        # other deprecated calls of any kind: a fix never edits inside another one's call
        everything = [c for c, _ in ctx.calls_to(set(deprecated_symbols()))]
        for call, qualname in calls:
            func = call.child_by_field_name("function")
            message = self.message(qualname, symbols[qualname])
            fix = None
            if not call.has_error:
                try:
                    fix = self.fix(ctx, call, qualname, [c for c in everything if c != call])
                except CannotFix as why:
                    message += f" (no automatic fix: {why})"
            yield Finding(self.code, message, func.start_byte, func.end_byte, fix=fix, deprecated=True)
