"""The language server (pygls 2). Only `aoti-lsp serve` imports this package."""
