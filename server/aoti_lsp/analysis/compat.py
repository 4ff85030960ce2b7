"""Compatibility fallbacks: an old-API call that runs only where the new API is missing or
failed, written for older torch beside the new path (found in public code):

    if hasattr(torch._inductor, "aoti_compile_and_package"): <new> else: <old>
    try: <new> except ImportError: <old>
    try: return <new> except ...: pass
    <old>                                   # reached only when the try above did not return
    for x in ...: try: return <new> ...     # the same, the try inside a loop (or a `with`)

Their deprecation is known to the author, who keeps them on purpose: no finding, and no
migration (it would duplicate the branch that is already there)."""

from __future__ import annotations

from aoti_lsp.analysis.source import descendants
from aoti_lsp.analysis.treesitter import Node

NEW_NAMES = (b"aoti_compile_and_package", b"aoti_load_package", b"load_package")
# the new API's functions, which are not modules: importing one as a module always fails
# (torch 2.13: ModuleNotFoundError; tests/torch/test_migration.py), so a `try` doing that
# never takes the new path and its `except ImportError:` branch always runs (inductor-rs)
NOT_MODULES = ("torch._inductor.aoti_compile_and_package", "torch._inductor.aoti_load_package",
               "torch._inductor.package.load_package")
_SCOPES = ("function_definition", "class_definition", "lambda", "module")


def _new_api(node: Node | None) -> bool:
    text = node.text if node is not None else None
    return bool(text) and any(name in text for name in NEW_NAMES)


def _returns(node: Node) -> bool:
    """Whether a return statement sits in `node` (not in a function nested in it)."""
    return next(descendants(node, "return_statement", skip=_SCOPES), None) is not None


def _guarded_earlier(stmt: Node) -> bool:
    """A statement before `stmt` in its block tries the new API and returns on success: `stmt`
    runs only when that failed (`try: return aoti_load_package(p) except ...: pass`)."""
    sibling = stmt.prev_named_sibling
    while sibling is not None:
        if sibling.type == "try_statement":
            body = sibling.child_by_field_name("body")
            if _new_api(body) and _returns(body) and failing_import(body) is None:
                return True
        elif sibling.type == "if_statement":
            consequence = sibling.child_by_field_name("consequence")
            if _new_api(sibling.child_by_field_name("condition")) and _new_api(consequence) and _returns(consequence):
                return True
        elif sibling.type in ("for_statement", "while_statement", "with_statement") and _new_api(sibling):
            # `for loader in ("aoti_load_package",): try: return <new> except ...: ...` (MACE-ICTD)
            for attempt in descendants(sibling, "try_statement", skip=_SCOPES):
                body = attempt.child_by_field_name("body")
                if _new_api(body) and _returns(body) and failing_import(body) is None:
                    return True
        sibling = sibling.prev_named_sibling
    return False


def is_fallback(call: Node) -> bool:
    """Whether `call` runs only where the new API is missing or failed (the module docstring's shapes)."""
    node = call
    while node.parent is not None and node.type not in _SCOPES:
        parent = node.parent
        if parent.type in ("else_clause", "elif_clause"):
            branches = parent.parent
            if branches is not None and branches.type == "if_statement" \
                    and _new_api(branches.child_by_field_name("condition")) \
                    and _new_api(branches.child_by_field_name("consequence")):
                return True  # a test for the new API, not an option (`if package: <new> else: <old>`)
        elif parent.type == "except_clause":
            branches = parent.parent
            if branches is not None and branches.type == "try_statement" \
                    and _new_api(branches.child_by_field_name("body")) \
                    and failing_import(branches.child_by_field_name("body")) is None:
                return True
        elif parent.type == "if_statement" and node == parent.child_by_field_name("consequence"):
            condition = parent.child_by_field_name("condition")
            if condition is not None and condition.type == "not_operator" and _new_api(condition):
                return True  # `if not hasattr(torch._inductor, "aoti_load_package"): <old>`
        if parent.type == "block" and _guarded_earlier(node):
            return True
        node = parent
    return False


def failing_import(body: Node | None) -> Node | None:
    """The import in a `try` body that imports a new-API function as a module (`from
    torch._inductor.aoti_compile_and_package import aoti_compile_and_package`): it always fails."""
    if body is None or not any(name.encode() in body.text for name in NOT_MODULES):
        return None
    for stmt in descendants(body, skip=_SCOPES):
        if stmt.type == "import_from_statement":
            module = stmt.child_by_field_name("module_name")
            if module is not None and module.text.decode() in NOT_MODULES:
                return stmt
        elif stmt.type == "import_statement":
            for name in stmt.children_by_field_name("name"):
                dotted = name.child_by_field_name("name") if name.type == "aliased_import" else name
                if dotted is not None and dotted.text.decode() in NOT_MODULES:
                    return stmt
    return None


def broken_fallback(call: Node) -> Node | None:
    """The always-failing import of the `try` whose `except` holds `call`, or of a `try` before
    it that returns the new API's result (failing_import)."""
    node = call
    while node.parent is not None and node.type not in _SCOPES:
        parent = node.parent
        tries = []
        if parent.type == "except_clause" and parent.parent is not None and parent.parent.type == "try_statement":
            tries.append(parent.parent)
        if parent.type == "block":
            sibling = node.prev_named_sibling
            while sibling is not None:
                tries += [sibling] if sibling.type == "try_statement" else []
                sibling = sibling.prev_named_sibling
        for attempt in tries:
            found = failing_import(attempt.child_by_field_name("body"))
            if found is not None:
                return found
        node = parent
    return None
