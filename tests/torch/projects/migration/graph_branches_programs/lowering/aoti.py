"""saifhaq/alma's lowering: `lowered` compiles an ExportedProgram's .module() in one branch of an
isinstance test and a graph module in the other, and one old loader (on `device.type`) loads
either; its one caller passes what an export helper annotated `-> ExportedProgram` returns, so
the graph branch never runs. The migration compiles the program itself (its dynamic batch kept)."""
import torch._export
import torch._inductor
from torch.export.exported_program import ExportedProgram
from torch.fx.graph_module import GraphModule

from .export import get_exported_model


def forward_call(model: torch.nn.Module, data: torch.Tensor, device: torch.device):
    model = get_exported_model(model, data)
    return lowered(model, data, device)


def lowered(model: ExportedProgram | GraphModule, data: torch.Tensor, device: torch.device):
    if isinstance(model, ExportedProgram):
        with torch.no_grad():
            so_path = torch._inductor.aot_compile(model.module(), (data,))
    else:
        with torch.no_grad():
            so_path = torch._inductor.aot_compile(model, (data,))
    return torch._export.aot_load(so_path, device=device.type)
