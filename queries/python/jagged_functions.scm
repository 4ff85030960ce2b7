; Function definitions that may take jagged inputs: every `forward`, and the functions
; given to torch.compile / aot_compile. Rules (aoti_lsp.jagged) filter these by name.
(function_definition
  name: (identifier) @name
  body: (block) @body) @func
