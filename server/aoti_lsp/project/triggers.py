"""Each rule's trigger tokens as data, so that a run can drop files without trigger tokens
before any rule is imported (runner.gate; the rules cost ~40 ms to import, a cold run over a tree
with no AOTI code needs nothing else of them). tests/test_cli_speed.py checks that this table
is exactly what the rules compute: a rule's new token fails it (copy the printed table here).

Clauses: ((any of A), (any of B, when B)). CHECKS: what `Rule.wants` needs of a file for each
rule; SUMMARIES: what `Rule.wants_summary` needs, for the rules that summarise. Valid under a
configuration without rule options (jagged-names changes AOTI201's tokens): runner.gate then
asks the rules themselves."""

from __future__ import annotations

_EXPORTS = ("aot_load", "load_package", "aot_compile", "aoti_compile_and_package")
_SUMMARY = ("export(", "export as", "export_for_training", "draft_export", "aot_compile",
            "aoti_compile_and_package", "load_package", "aot_load", "offsets=", "complete_cumsum")

CHECKS = (
    ("AOTI001", (("aot_compile",), ())),
    ("AOTI002", (("aot_load",), ())),
    ("AOTI003", (("load_package",), ())),
    ("AOTI101", (_EXPORTS, ())),
    ("AOTI102", (_EXPORTS, ())),
    ("AOTI103", (_EXPORTS, ())),
    ("AOTI201", (("def forward", "aot_compile"), ("lengths", "offsets", "seq_lens", "jagged", "cu_seqlens"))),
    ("AOTI202", (("def forward", "aot_compile("), ("numel", "shape[0]", "size(0)", "len(", "_check", "cond("))),
    ("AOTI301", (("environ", "putenv"), tuple(f"{q}{name}{q}" for name in (
        "TORCHINDUCTOR_NAN_ASSERTS", "AOT_INDUCTOR_DEBUG_INTERMEDIATE_VALUE_PRINTER",
        "AOT_INDUCTOR_FILTERED_KERNELS_TO_PRINT", "AOTI_RUNTIME_CHECK_INPUTS", "TORCH_LOGS", "CUDA_LAUNCH_BLOCKING",
        "PYTORCH_NO_CUDA_MEMORY_CACHING") for q in "\"'"))),
)
SUMMARIES = (
    ("AOTI101", (_EXPORTS, ())),
    ("AOTI102", (_EXPORTS, ())),
    ("AOTI103", (_EXPORTS, ())),
    ("AOTI201", (_SUMMARY, ())),
    ("AOTI202", (_SUMMARY, ())),
)
CODES = tuple(code for code, _ in CHECKS)


def clauses(config) -> tuple | None:
    """runner.gate's answer under `config` from this table; None where rule options apply."""
    if config.options:
        return None
    return tuple(dict.fromkeys(c for table in (CHECKS, SUMMARIES) for code, c in table if config.enabled(code)))


def codes_for(has, config) -> tuple[str, ...] | None:
    """The codes of the rules that could check or summarise a file (`has(token)`: whether it
    spells it; Source.has, whose answers the rules' own tests reuse), enabled or not (the engine
    decides that per path): the others are never imported for it (rules.rules_for). None where
    rule options apply."""
    if config.options:
        return None
    return tuple(code for code, clauses in _BY_CODE if any(
        any(map(has, a)) and (not b or any(map(has, b))) for a, b in clauses))


_BY_CODE = tuple((code, tuple(c for table in (CHECKS, SUMMARIES) for k, c in table if k == code)) for code in CODES)
