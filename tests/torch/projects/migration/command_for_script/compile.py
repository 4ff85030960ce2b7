"""zhxchen17/torchnative's wip/flux_aoti.py shape: two exported programs compiled (each with its
own example inputs spread in, batch dynamic) and their paths printed as the command that runs
the other script, which loads them from its command line."""
import torch
from torch.export import Dim


class Encoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 16)

    def forward(self, x):
        return torch.relu(self.fc(x))


class Head(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(16, 4)

    def forward(self, h):
        return self.fc(h).softmax(-1)


torch.manual_seed(0)
encoder, head = Encoder().eval(), Head().eval()
batch = Dim("batch", min=2, max=64)

print("compiling the encoder...")
with torch.no_grad():
    encoder_ep = torch.export.export(encoder, (torch.randn(4, 8),), dynamic_shapes={"x": {0: batch}})
    encoder_path = torch._inductor.aot_compile(encoder_ep.module(), *encoder_ep.example_inputs)

print("compiling the head...")
with torch.no_grad():
    head_ep = torch.export.export(head, (torch.randn(4, 16),), dynamic_shapes={"h": {0: batch}})
    head_path = torch._inductor.aot_compile(head_ep.module(), *head_ep.example_inputs)

print(f"python serve.py {encoder_path} {head_path}")
