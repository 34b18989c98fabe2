"""The decode peer: cuDNN (through torch SDPA) at the decode shapes that
gqa_host --bench times gqa_decode on (issue 21): NQ 7, D 128, HQ 28 / HKV 4,
one query position, B 16 T 8192, B 1 T 32768, B 64 T 4096, B 1 T 131072.

Timed as gqa_host times (triton.testing.do_bench: L2 flushed before each
rep, the median); TB/s counts the K and V bytes, as gqa_host does. Each
line: "peer decode B <b> T <t> <backend> <us> us <TB/s> TB/s"."""
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from triton.testing import do_bench

SHAPES = [(16, 8192), (1, 32768), (64, 4096), (1, 131072)]
HQ, HKV, D = 28, 4, 128


def bench(b, t, backend):
    q = torch.randn(b, HQ, 1, D, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(b, HKV, t, D, device="cuda", dtype=torch.bfloat16)
    v = torch.randn(b, HKV, t, D, device="cuda", dtype=torch.bfloat16)
    with sdpa_kernel([backend]):
        f = lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
        f()
        ms = do_bench(f, warmup=25, rep=200, return_mode="median")
    return ms * 1e3, 2 * k.numel() * k.element_size() / (ms * 1e-3) / 1e12


for b, t in SHAPES:
    for backend in (SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION):
        try:
            us, tbs = bench(b, t, backend)
            print(f"peer decode B {b:<2} T {t:<6} {backend.name:16s} {us:9.1f} us {tbs:6.2f} TB/s", flush=True)
        except Exception as e:  # a backend that refuses the shape says so
            print(f"peer decode B {b:<2} T {t:<6} {backend.name:16s} unavailable: {str(e)[:100]}", flush=True)
