from app.build import build
from app.serve import predict

build()
out = predict([[float(i + j) / 10 for j in range(8)] for i in range(3)])
print(" ".join(f"{v:.5f}" for v in out.tolist()))
