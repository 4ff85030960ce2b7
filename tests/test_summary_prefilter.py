"""What a file's text decides before any parse (jagged.wants_summary): AOTI201/202's summary
is asked where a file can call torch's export, not where it only spells `export(` (torch's own
sources: 2.2 MB of such files were parsed for an empty summary)."""

import pytest

from aoti_lsp.project.config import Config

# `export(` alone asks AOTI201/202's summary (a parse) only where torch's
# export can be called; a twin of each shape that calls it must still be summarised
MODEL = "import torch\nclass M(torch.nn.Module):\n    def forward(self, x, lengths):\n        return x\n"
NOT_TORCH_EXPORT = [
    MODEL + "torch.onnx.export(M(), (x,), 'm.onnx')\n",
    MODEL + "def export(path):\n    '''Writes the model; see torch.export for packages.'''\n",
    MODEL + "exporter.export(M())\n",
    MODEL + "from torch.export import ExportedProgram\ntorch.onnx.export(M(), (x,), 'm.onnx')  # see torch.export\n",
]
TORCH_EXPORT = [
    MODEL + "from torch.export import export as ex\nep = ex(M(), (x,))\n",
    MODEL.replace("import torch\n", "import torch as t\n").replace("torch.nn", "t.nn") + "ep = t.export.export(M(), (x,))\n",
    MODEL + "from torch import export\nep = export.export(M(), (x,))\n",
    MODEL + "ep = torch.export.export(M(), (x,))\n",
    MODEL + "from torch import (\n    nn,\n    export,\n)\nep = export.export(M(), (x,))\n",
]


@pytest.mark.parametrize("text", NOT_TORCH_EXPORT)
def test_a_file_that_cannot_call_torch_export_is_not_parsed_for_its_summary(text):
    from aoti_lsp.analysis.source import Source
    from aoti_lsp.project.project import summarize

    source = Source(text.encode(), "m.py")
    assert summarize(source, Config()) == {} and not source.parsed


@pytest.mark.parametrize("text", TORCH_EXPORT)
def test_a_file_that_calls_torch_export_keeps_its_summary(text):
    from aoti_lsp.analysis.source import Source
    from aoti_lsp.project.project import summarize

    summary = summarize(Source(text.encode(), "m.py"), Config())
    assert summary.get("AOTI201", {}).get("exports"), summary
