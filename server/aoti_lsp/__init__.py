"""aoti-lsp: catch PyTorch AOTInductor misuse before it becomes a segfault in production."""

__version__ = "0.1.0"
