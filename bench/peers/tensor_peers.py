# PyTorch's figures for the tensor library's benchmarks that ../shared/peers/torch_peers.py does not
# measure: layer_norm rows, a product with a transposed operand, and the elementwise chain
# gelu(a * w + b) eagerly and under torch.compile. Prints JSON for `kiln bench --peers`.
#   python3 bench/peers/tensor_peers.py
import json, time, torch
import torch.nn.functional as F

dev = "cuda"
torch.backends.cuda.matmul.allow_tf32 = False


def bench(fn, reps=50, warm=10):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        s = torch.cuda.Event(enable_timing=True)
        e = torch.cuda.Event(enable_timing=True)
        s.record(); fn(); e.record(); torch.cuda.synchronize()
        ts.append(s.elapsed_time(e) / 1e3)
    ts.sort()
    return ts[len(ts) // 2]


out = {}
print(torch.cuda.get_device_name(), torch.version.cuda, torch.__version__)

# layer_norm over rows of 4096, f32: bytes read and written once.
a = torch.randn(32768, 4096, device=dev)
g = torch.randn(4096, device=dev)
beta = torch.randn(4096, device=dev)
t = bench(lambda: F.layer_norm(a, (4096,), g, beta))
out["layer_norm_f32_32768x4096_GBps"] = 2 * a.numel() * 4 / t / 1e9

# gelu(a * w + b) with w and b rows broadcast over a (a bias-and-activation): the bytes that must
# move are a read and the result written, 8 per element; eager PyTorch moves 24 (three kernels).
w = torch.randn(4096, device=dev)
b = torch.randn(4096, device=dev)
chain = lambda: F.gelu(a * w + b)
t = bench(chain)
out["gelu_chain_eager_f32_32768x4096_GBps"] = 2 * a.numel() * 4 / t / 1e9
compiled = torch.compile(chain)
s = time.perf_counter()
compiled()
torch.cuda.synchronize()
out["gelu_chain_compile_first_call_s"] = time.perf_counter() - s
t = bench(compiled)
out["gelu_chain_compile_f32_32768x4096_GBps"] = 2 * a.numel() * 4 / t / 1e9
del a, w, b

# A @ W.t() in bf16 (cuBLAS reads the transposed operand in place).
for n in [4096, 8192]:
    A = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
    W = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
    t = bench(lambda: A @ W.t(), reps=20)
    out[f"matmul_bf16_nt_{n}_TFLOPs"] = 2 * n**3 / t / 1e12
print(json.dumps(out, indent=1))
