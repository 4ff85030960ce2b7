"""umut-kocak/PyTorchDemos' shape: a helper compiles to the path its one caller passes (built from
a command-line option whose default ends in .so), and the caller loads that path after the call."""
import argparse
import os

import torch

# Default model export filename
DEFAULT_MODEL_FILENAME = "head_pt.so"


def get_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--output-model-file-name", default=DEFAULT_MODEL_FILENAME,
                        help="File name for the exported model")
    return parser.parse_args()


class Head(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 3)

    def forward(self, x):
        return torch.softmax(self.fc(x), dim=-1)


def export_model(model, example_inputs, output_model_file):
    batch_dim = torch.export.Dim("batch", min=2, max=32)
    aot_compile_options = {"aot_inductor.output_path": output_model_file}
    exported_program = torch.export.export(model, example_inputs, dynamic_shapes={"x": {0: batch_dim}})
    torch._inductor.aot_compile(exported_program.module(), example_inputs, options=aot_compile_options)
    return output_model_file


def main():
    args = get_args()
    torch.manual_seed(0)
    model = Head().eval()
    example_inputs = (torch.randn(4, 8),)
    output_model_path = os.path.join(os.getcwd(), args.output_model_file_name)
    export_model(model, example_inputs, output_model_path)
    runner = torch._export.aot_load(output_model_path, device="cpu")
    torch.manual_seed(1)
    for n in (2, 3, 7, 16):
        y = runner(torch.randn(n, 8))
        print(n, tuple(y.shape), f"{y[:, 0].sum().item():.4f}", f"{y[:, 2].sum().item():.4f}")


if __name__ == "__main__":
    main()
