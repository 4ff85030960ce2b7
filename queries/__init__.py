"""tree-sitter queries, shipped inside the aoti_lsp wheel as aoti_lsp.queries."""
