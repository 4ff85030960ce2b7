"""Snippet fixes for editors without snippet edits: they get the plain code."""

from aoti_lsp.lsp.convert import plain_text


def test_snippet_text_for_clients_without_snippets():
    assert plain_text("return torch.empty(${1:0, self.dim}, device=${2:x.device})") == \
        "return torch.empty(0, self.dim, device=x.device)"
    assert plain_text(r"cost = \$5; d = {\}; p = 'a\\b'$0") == r"cost = $5; d = {}; p = 'a\b'"
    assert plain_text(r"${1:f(\}\$)}") == "f(}$)"
