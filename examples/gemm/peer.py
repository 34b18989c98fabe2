# The GEMM example's peer in the same call: torch.mm (cuBLAS), and the same
# epilogues unfused, at the sizes gemm_host --bench times, with triton's
# do_bench (the L2 flushed before each rep, the median).
import torch
from triton.testing import do_bench

for dt, name in ((torch.bfloat16, "bf16"), (torch.float16, "f16")):
    for M, N, K in ((4096, 4096, 4096), (8192, 8192, 8192), (4096, 14336, 4096), (4093, 4096, 4000)):
        a = torch.randn(M, K, device="cuda", dtype=dt)
        b = torch.randn(K, N, device="cuda", dtype=dt)
        bias = torch.randn(N, device="cuda", dtype=dt)
        us = do_bench(lambda: torch.mm(a, b), warmup=25, rep=100, return_mode="median") * 1e3
        act = torch.nn.functional.gelu if dt == torch.bfloat16 else torch.relu
        kw = {"approximate": "tanh"} if dt == torch.bfloat16 else {}
        ue = do_bench(lambda: act(torch.mm(a, b) + bias, **kw), warmup=25, rep=100, return_mode="median") * 1e3
        tf = 2 * M * N * K / (us * 1e-6) / 1e12
        print(f"peer torch.mm {name:4s} M {M:5d} N {N:5d} K {K:5d}: {us:9.1f} us, {tf:6.1f} TFLOP/s; "
              f"with bias + {'gelu' if dt == torch.bfloat16 else 'relu'} {ue:9.1f} us", flush=True)
