; Every call through a plain or dotted name: `f(...)`, `a.b.f(...)`.
; Rules filter these by what the name resolves to (aoti_lsp.analysis.names), so aliases work.
(call
  function: [(identifier) (attribute)] @func
  arguments: (argument_list) @args) @call
