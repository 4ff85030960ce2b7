"""saifhaq/alma's lowering: one function compiles an ExportedProgram's .module() in one branch of
an isinstance test and a graph module in the other, and one old loader (on `device.type`) loads
either. The migration compiles the program itself (its dynamic batch kept) and re-exports the
graph module, which is static here as the old compile was: so the editor offers it, and says
that a graph module with dynamic dims would become static."""
import torch
from torch.export import Dim
from torch.export.exported_program import ExportedProgram
from torch.fx.graph_module import GraphModule


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 4)

    def forward(self, x):
        return torch.tanh(self.fc(x)) + 1


def lowered(model: ExportedProgram | GraphModule, data: torch.Tensor, device: torch.device):
    if isinstance(model, ExportedProgram):
        with torch.no_grad():
            so_path = torch._inductor.aot_compile(model.module(), (data,))
    else:
        with torch.no_grad():
            so_path = torch._inductor.aot_compile(model, (data,))
    return torch._export.aot_load(so_path, device=device.type)


torch.manual_seed(0)
net = Net().eval()
x = torch.randn(4, 8)
program = torch.export.export(net, (x,), dynamic_shapes=({0: Dim("batch", min=2, max=64)},))
graph = torch.export.export(net, (x,)).module()  # a static graph module
by_program = lowered(program, x, torch.device("cpu"))
by_graph = lowered(graph, x, torch.device("cpu"))
torch.manual_seed(1)
for n in (2, 3, 7, 16):
    y = by_program(torch.randn(n, 8))
    print("program", n, tuple(y.shape), f"{y.sum().item():.4f}")
y = by_graph(torch.randn(4, 8))
print("graph", 4, tuple(y.shape), f"{y.sum().item():.4f}")
