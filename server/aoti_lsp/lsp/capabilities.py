"""Client capabilities, resolved once at initialize into flat booleans (ruff's
ResolvedClientCapabilities): handlers never walk nested optional capability trees."""

from __future__ import annotations

from dataclasses import dataclass

from lsprotocol import types


def _get(obj, *path, default=None):
    for name in path:
        obj = getattr(obj, name, None)
        if obj is None:
            return default
    return obj


@dataclass(frozen=True)
class ResolvedClientCapabilities:
    pull_diagnostics: bool = False
    diagnostic_refresh: bool = False
    resolve_code_action_edits: bool = False
    document_changes: bool = False
    related_information: bool = False
    code_description: bool = False
    diagnostic_tags: bool = False
    snippet_edits: bool = False
    hover_markdown: bool = False
    watched_files_dynamic: bool = False

    @classmethod
    def resolve(cls, caps: types.ClientCapabilities) -> "ResolvedClientCapabilities":
        resolve_props = _get(caps, "text_document", "code_action", "resolve_support", "properties", default=[])
        hover_formats = _get(caps, "text_document", "hover", "content_format", default=[])
        return cls(
            pull_diagnostics=_get(caps, "text_document", "diagnostic") is not None,
            diagnostic_refresh=bool(_get(caps, "workspace", "diagnostics", "refresh_support")),
            resolve_code_action_edits="edit" in resolve_props,
            document_changes=bool(_get(caps, "workspace", "workspace_edit", "document_changes")),
            related_information=bool(_get(caps, "text_document", "publish_diagnostics", "related_information")),
            code_description=bool(_get(caps, "text_document", "publish_diagnostics", "code_description_support")),
            diagnostic_tags=_get(caps, "text_document", "publish_diagnostics", "tag_support") is not None,
            snippet_edits=bool(_get(caps, "workspace", "workspace_edit", "snippet_edit_support")),
            hover_markdown=types.MarkupKind.Markdown in hover_formats,
            watched_files_dynamic=bool(_get(caps, "workspace", "did_change_watched_files", "dynamic_registration")),
        )
