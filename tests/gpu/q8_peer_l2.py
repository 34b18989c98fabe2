"""Issue 4's peer beside our bench's L2 states: the Triton q8 kernel of
../shared/tools/peers.py, a same-size torch copy, and a read-only ceiling (a
Triton kernel that reads q8's bytes once, 16 bytes a load, and sums them:
what a matvec that only reads could reach), timed from three L2 states:
after a 256 MiB memset (as do_bench), after that memset and a read of another
256 MiB (a clean, cold L2: the memset's dirty lines already written back), and
idle. Median of 51 reps, CUDA events. Run on the device machine:
  python3 tests/gpu/q8_peer_l2.py"""
import os, tempfile
os.environ.setdefault("TRITON_CACHE_DIR", tempfile.mkdtemp(prefix="tcache"))
import torch, triton, triton.language as tl

@triton.autotune(configs=[triton.Config({"BN": bn, "BK": bk}, num_warps=w)
                          for bn in (64, 128, 256) for bk in (32, 64, 128) for w in (4, 8)], key=["K", "N"])
@triton.jit
def q8_matvec(A, W, S, C, K, N, BN: tl.constexpr, BK: tl.constexpr):
    pid = tl.program_id(0)
    offs_n = pid * BN + tl.arange(0, BN)
    acc = tl.zeros([BN], dtype=tl.float32)
    for k in range(0, K, BK):
        offs_k = k + tl.arange(0, BK)
        a = tl.load(A + offs_k)
        w = tl.load(W + offs_k[:, None] * N + offs_n[None, :]).to(tl.float32)
        s = tl.load(S + (offs_k[:, None] // 32) * N + offs_n[None, :])
        acc += tl.sum(a[:, None] * w * s, axis=0)
    tl.store(C + offs_n, acc)

@triton.autotune(configs=[triton.Config({"BLOCK": b, "ITERS": it}, num_warps=w)
                          for b in (1024, 2048, 4096) for it in (4, 8, 16) for w in (4, 8)], key=["n"])
@triton.jit
def read_sum(X, OUT, n, BLOCK: tl.constexpr, ITERS: tl.constexpr):
    pid = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.int32)
    for i in range(ITERS):
        offs = (pid * ITERS + i) * BLOCK + tl.arange(0, BLOCK)
        acc += tl.load(X + offs, mask=offs < n, other=0)
    tl.store(OUT + pid, tl.sum(acc, axis=0))

dev = torch.device("cuda")
cache = torch.empty(256 << 20, dtype=torch.int8, device=dev)
other = torch.zeros(64 << 20, dtype=torch.float32, device=dev)
def timed(fn, mode):
    ts = []
    for i in range(51):
        if mode != "idle":
            cache.zero_()
            if mode == "clean":
                other.sum()
        e0 = torch.cuda.Event(enable_timing=True); e1 = torch.cuda.Event(enable_timing=True)
        e0.record(); fn(); e1.record(); e1.synchronize()
        ts.append(e0.elapsed_time(e1))
    ts.sort()
    return ts[25] * 1e3
for (K, N) in [(4096, 14336), (8192, 28672)]:
    A = torch.randn(1, K, device=dev); W = torch.randint(-127, 128, (K, N), dtype=torch.int8, device=dev)
    S = torch.rand(K // 32, N, device=dev) * 0.01; C = torch.empty(1, N, device=dev)
    grid = lambda meta: (N // meta["BN"],)
    q8_matvec[grid](A, W, S, C, K, N)
    byts = K * N + (K // 32) * N * 4 + K * 4 + N * 4
    half = K * N // 2
    src = W.view(-1)[:half]; dst = torch.empty_like(src)
    X = torch.randint(-1000, 1000, ((byts + 3) // 4,), dtype=torch.int32, device=dev)
    R = torch.empty(X.numel() // 1024 + 1, dtype=torch.int32, device=dev)
    rgrid = lambda meta: (triton.cdiv(X.numel(), meta["BLOCK"] * meta["ITERS"]),)
    read_sum[rgrid](X, R, X.numel())
    for name, fn, b in (("triton q8", lambda: q8_matvec[grid](A, W, S, C, K, N), byts), ("torch copy same B", lambda: dst.copy_(src), 2 * half),
                        ("triton read q8's B", lambda: read_sum[rgrid](X, R, X.numel()), 4 * X.numel())):
        r = [(m, timed(fn, m)) for m in ("memset", "clean", "idle")]
        print(f"{K}x{N} {name:18s} " + " | ".join(f"{m} {us:.1f} us {b / (us * 1e-6) / 1e12:.2f} TB/s" for m, us in r), flush=True)
