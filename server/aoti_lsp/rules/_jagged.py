"""What AOTI201 and AOTI202 share: one summary per file (jagged.summary_owner), asked for by the
same tokens, and given from the text alone where it can be (jagged.wants_summary,
jagged.summary_from_text)."""

from __future__ import annotations

from aoti_lsp.analysis.jagged import summary_from_text, wants_summary
from aoti_lsp.rules import Rule


class JaggedRule(Rule):
    # files that only export a model or call a package still need a summary (cross-file); the
    # export tokens count only where torch's export can be called (jagged.wants_summary)
    summary_triggers = ("export(", "export as", "export_for_training", "draft_export", "aot_compile",
                        "aoti_compile_and_package", "load_package", "aot_load", "offsets=",
                        "complete_cumsum")  # + callers' complete offsets

    def wants_summary(self, source, config):
        return wants_summary(self, source)

    def summary_from_text(self, source, config):
        return summary_from_text(self, source, config)
