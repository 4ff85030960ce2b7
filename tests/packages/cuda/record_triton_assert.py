"""Records the CUDA text of the Triton index assertion (run on a GPU machine, not by the tests).

The LastItemGather kernel under torch.compile (the same Inductor/Triton code as the package), one
subprocess per case, CUDA_LAUNCH_BLOCKING=1: `python record_triton_assert.py OUT_DIR`.
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CASE = r"""
import sys, torch
sys.path.insert(0, sys.argv[1])
from models import VARIANTS, example
name, case = sys.argv[2], sys.argv[3]
f = torch.compile(VARIANTS[name]().cuda(), dynamic=True)
print(f(*example("cuda")).sum().item(), flush=True)
D = 4
if case == "lengths_past_values":  # sum(lengths) > rows of values: idx out of range, no size 0
    args = (torch.ones(2, D, device="cuda"), torch.tensor([3, 5], device="cuda"))
elif case == "zero_lengths":
    args = (torch.empty(0, D, device="cuda"), torch.zeros(2, dtype=torch.int64, device="cuda"))
else:
    args = (torch.empty(0, D, device="cuda"), torch.empty(0, dtype=torch.int64, device="cuda"))
out = f(*args)
torch.cuda.synchronize()
print("no error:", out.shape, flush=True)
"""

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
env = {**os.environ, "CUDA_LAUNCH_BLOCKING": "1"}
print(subprocess.run([sys.executable, "-c", "import torch, triton; print(torch.__version__, triton.__version__, "
                      "torch.cuda.get_device_name())"], capture_output=True, text=True).stdout)
for name, case in [("LastItemGather", "lengths_past_values"), ("LastItemGather", "zero_lengths"),
                   ("TotalFromLastOffset", "empty")]:
    res = subprocess.run([sys.executable, "-c", CASE, HERE, name, case], env=env, capture_output=True, text=True,
                         timeout=240)
    with open(os.path.join(out, f"{name}-{case}.log"), "w") as fh:
        fh.write(f"# exit code {res.returncode}\n{res.stdout}\n{res.stderr}")
    print(name, case, res.returncode, res.stderr[-600:])
