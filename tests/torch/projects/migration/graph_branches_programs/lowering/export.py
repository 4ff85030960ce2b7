"""The export helper: what it returns is annotated, and its batch is dynamic."""
import torch
from torch.export import Dim
from torch.export.exported_program import ExportedProgram


def get_exported_model(model: torch.nn.Module, data: torch.Tensor) -> ExportedProgram:
    return torch.export.export(model, (data,), dynamic_shapes=({0: Dim("batch", min=2, max=64)},))
